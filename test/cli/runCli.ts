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
