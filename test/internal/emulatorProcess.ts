// `svc-stream emulator` as a child process, run from the sources, so a test can kill it
// (SIGKILL: a crash, no close frame; SIGTERM: a planned restart) and start it again on the
// same port while a client session is live.
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const CLI = fileURLToPath(new URL('../fleet/cli.ts', import.meta.url));
const BIN = fileURLToPath(new URL('../../bin/svc-stream.js', import.meta.url));
const ROOT = fileURLToPath(new URL('../../', import.meta.url));

export interface EmulatorProcess {
  readonly child: ChildProcess;
  readonly baseUrl: string;
  readonly apiKey: string;
  readonly port: number;
  /** What the process wrote on stderr so far. */
  readonly stderr: () => string;
  /** Resolves with the exit code (or the signal's name) once the process has exited. */
  readonly exited: Promise<number | string>;
  /** Send `signal` and wait for the exit. */
  stop(signal?: NodeJS.Signals): Promise<number | string>;
}

/**
 * Start `svc-stream emulator --port PORT` (0: a free one) and wait for its environment lines.
 * From the sources (tsx), or with `built` the built CLI (`bin/svc-stream.js`, as a user runs
 * it): it starts in a fraction of the time, and is as current as the last build (`npm test`
 * builds; after changing src/ alone, `npm run build`).
 */
export function spawnEmulator(port = 0, extraArgs: readonly string[] = [], { built = false }: { built?: boolean } = {}): Promise<EmulatorProcess> {
  const entry = built ? [BIN] : ['--import', 'tsx', CLI];
  const child = spawn(process.execPath, [...entry, 'emulator', '--port', String(port), ...extraArgs], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, SVC_API_KEY: '', SVC_BASE_URL: '' },
  });
  let out = '';
  let err = '';
  const exited = new Promise<number | string>((resolve) => child.once('exit', (code, signal) => resolve(code ?? signal ?? -1)));
  child.stderr!.on('data', (d: Buffer) => (err += d.toString()));
  return new Promise((resolve, reject) => {
    // tsx compiles the CLI on start: slow on a loaded machine.
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`emulator did not start in 40 s: ${err}`));
    }, 40_000);
    const early = (): void => {
      clearTimeout(timer);
      reject(new Error(`emulator exited before it started: ${err}`));
    };
    child.once('exit', early);
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      const env = Object.fromEntries(out.split('\n').filter((l) => l.includes('=')).map((l) => l.split('=', 2) as [string, string]));
      if (env['SVC_BASE_URL'] && env['SVC_API_KEY'] && out.includes('SVC_PLATFORM_API_KEY=')) {
        clearTimeout(timer);
        child.off('exit', early);
        const baseUrl = env['SVC_BASE_URL'];
        resolve({
          child,
          baseUrl,
          apiKey: env['SVC_API_KEY'],
          port: Number(new URL(baseUrl).port),
          stderr: () => err,
          exited,
          stop: (signal = 'SIGTERM') => {
            if (child.exitCode === null && child.signalCode === null) child.kill(signal);
            return exited;
          },
        });
      }
    });
  });
}
