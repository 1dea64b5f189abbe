// Processes a CLI test starts (the real bin, with its workers), stopped after each test even
// when it times out: call `afterEach(killSpawned)` in the test file.
import { spawn, type ChildProcess } from 'node:child_process';

const children: ChildProcess[] = [];

/** `spawn`, remembered for `killSpawned`. */
export function spawned(...args: Parameters<typeof spawn>): ChildProcess {
  const child = spawn(...args);
  children.push(child);
  return child;
}

/** SIGKILL every process `spawned` started (their workers exit with their primary). */
export function killSpawned(): void {
  for (const c of children.splice(0)) c.kill('SIGKILL');
}

/** `svc-stream ARGS` as a real process (the bin, with a clean environment), its output as it comes. */
export function spawnBin(args: readonly string[], env: NodeJS.ProcessEnv = {}): { child: ChildProcess; out(): string; err(): string } {
  const bin = new URL('../../bin/svc-stream.js', import.meta.url).pathname;
  const child = spawned(process.execPath, [bin, ...args], { env: { PATH: process.env['PATH'], ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout!.on('data', (c: Buffer) => (out += c.toString()));
  child.stderr!.on('data', (c: Buffer) => (err += c.toString()));
  return { child, out: () => out, err: () => err };
}
