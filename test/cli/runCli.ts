// The `svc-stream` command run in-process with injected I/O, as the CLI tests drive it.
import { PassThrough, Readable } from 'node:stream';
import { main } from '../../src/cli/main.js';
import type { CliIo } from '../../src/cli/command.js';

export interface CliRun {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

export interface CliRunOptions {
  readonly env?: NodeJS.ProcessEnv;
  readonly stdin?: Readable;
  readonly signal?: AbortSignal;
  /** Make stdout a 100-column terminal. */
  readonly tty?: boolean;
  /** Runs while the command does, with what it has printed on stdout (and stderr) so far. */
  readonly whileRunning?: (stdout: () => string, stderr: () => string) => Promise<void>;
}

export async function runCli(argv: string[], options: CliRunOptions = {}): Promise<CliRun> {
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  let out = '';
  let err = '';
  stdout.on('data', (c: Buffer) => (out += c.toString()));
  stderr.on('data', (c: Buffer) => (err += c.toString()));
  if (options.tty) Object.assign(stdout, { isTTY: true, columns: 100 });
  const io: CliIo = {
    stdout,
    stderr,
    stdin: options.stdin ?? Readable.from([]),
    env: options.env ?? {},
    ...(options.signal ? { signal: options.signal } : {}),
  };
  const exit = main(argv, io);
  await options.whileRunning?.(() => out, () => err);
  const code = await exit;
  return { code, stdout: out, stderr: err };
}

/** A command that listens, run in-process until stopped: the port it says it listens on, its output so far, its exit. */
export interface Serving {
  /** Resolves with the port once the command says it listens. */
  readonly port: Promise<number>;
  readonly exit: Promise<number>;
  stdout(): string;
  stderr(): string;
  /** Interrupt it (Ctrl-C). */
  stop(): void;
}

const serving: Serving[] = [];

/** Stop every command `serveCli` started and wait for each to exit: `afterEach(stopServing)`. */
export async function stopServing(): Promise<void> {
  for (const s of serving.splice(0)) {
    s.stop();
    await s.exit;
  }
}

/**
 * Start `argv`; its port is the first number `listening` (a pattern with one group) finds on
 * stderr. Stopped by `stopServing`.
 */
export function serveCli(argv: string[], listening: RegExp, env: NodeJS.ProcessEnv = {}): Serving {
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  let out = '';
  let err = '';
  let gotPort!: (p: number) => void;
  const port = new Promise<number>((r) => (gotPort = r));
  stdout.on('data', (c: Buffer) => (out += c.toString()));
  stderr.on('data', (c: Buffer) => {
    err += c.toString();
    const m = listening.exec(err);
    if (m) gotPort(Number(m[1]));
  });
  const controller = new AbortController();
  const exit = main(argv, { stdout, stderr, stdin: Readable.from([]), env, signal: controller.signal });
  const s: Serving = { port, exit, stdout: () => out, stderr: () => err, stop: () => controller.abort() };
  serving.push(s);
  return s;
}
