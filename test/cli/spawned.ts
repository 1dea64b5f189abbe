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
