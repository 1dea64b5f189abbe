// Run a sample the way its header says (`npx tsx samples/NAME.ts …`), bounded in time,
// against the embedded emulator (SVC_API_KEY and SVC_BASE_URL removed from its environment).
import { spawn, type ChildProcess } from 'node:child_process';

export interface SampleRun {
  readonly child: ChildProcess;
  /** Everything written to stdout so far. */
  stdout(): string;
  stderr(): string;
  /** Resolves with the exit code (kills the process group after `timeoutMs`). */
  readonly exited: Promise<number | null>;
  /** Resolves with the first match of `pattern` on stdout. */
  waitForStdout(pattern: RegExp, timeoutMs?: number): Promise<RegExpExecArray>;
}

export function runSample(name: string, args: readonly string[] = [], timeoutMs = 20_000): SampleRun {
  const env = { ...process.env };
  delete env['SVC_API_KEY'];
  delete env['SVC_BASE_URL'];
  // Its own process group, so the timeout ends npx, tsx and node together, and nothing else.
  const child = spawn('npx', ['--no-install', 'tsx', `samples/${name}.ts`, ...args], { env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout!.setEncoding('utf8').on('data', (c: string) => (out += c));
  child.stderr!.setEncoding('utf8').on('data', (c: string) => (err += c));
  const kill = (): void => {
    try {
      if (child.pid !== undefined) process.kill(-child.pid, 'SIGKILL');
    } catch {
      // already gone
    }
  };
  const timer = setTimeout(kill, timeoutMs);
  const exited = new Promise<number | null>((resolve) =>
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve(code);
    }),
  );
  return {
    child,
    stdout: () => out,
    stderr: () => err,
    exited,
    waitForStdout: (pattern, waitMs = timeoutMs) =>
      new Promise((resolve, reject) => {
        const check = (): void => {
          const m = pattern.exec(out);
          if (!m) return;
          child.stdout!.off('data', check);
          clearTimeout(t);
          resolve(m);
        };
        const t = setTimeout(() => reject(new Error(`no ${pattern} on stdout; got:\n${out}\nstderr:\n${err}`)), waitMs);
        child.stdout!.on('data', check);
        void exited.then(() => setTimeout(() => reject(new Error(`exited without ${pattern}; stdout:\n${out}\nstderr:\n${err}`)), 0));
        check();
      }),
  };
}
