// A long-running command (the emulator) ends when whoever started it goes away: its stdout pipe
// closes, its parent exits (`npx` killed, a shell hung up), or the process is signalled.
import { interval, type Subscription } from 'rxjs';
import type { CliIo } from './command.js';

/** Options of {@link exitWithParent}. */
export interface ExitWithParentOptions {
  /** Watch the parent process: a changed `process.ppid` means it exited. Default: when `io.stdout` is the process's own. */
  readonly watchParent?: boolean | undefined;
  /** How often the parent is checked, ms. Default 1000. */
  readonly pollMs?: number | undefined;
}

/** What ended the command: `signal`, `stdout closed` or `parent exited`. */
export type ExitReason = 'signal' | 'stdout closed' | 'parent exited';

/** An abort signal for the command's life, and the reason it ended. */
export interface ParentWatch {
  /** Aborted, with the {@link ExitReason} as its reason, when the command should end. */
  readonly signal: AbortSignal;
  /** Stop watching (the command ended on its own). */
  dispose(): void;
}

/**
 * Watch for the end of the command's parent: `io.signal` (SIGINT, SIGTERM, SIGHUP from the
 * bin), the stdout pipe closing (EPIPE or close: nobody reads the KEY=value lines any more), and
 * the parent process exiting (Node cannot ask the kernel for a parent-death signal, so the
 * parent id is polled: a reparented process has a new one).
 */
export function exitWithParent(io: CliIo, options: ExitWithParentOptions = {}): ParentWatch {
  const controller = new AbortController();
  const end = (reason: ExitReason) => {
    if (!controller.signal.aborted) controller.abort(reason);
  };
  const onSignal = () => end('signal');
  const onStdoutGone = () => end('stdout closed');
  if (io.signal?.aborted) end('signal');
  io.signal?.addEventListener('abort', onSignal, { once: true });
  io.stdout.on('error', onStdoutGone);
  io.stdout.on('close', onStdoutGone);
  let poll: Subscription | undefined;
  if (options.watchParent ?? io.stdout === process.stdout) {
    const parent = process.ppid;
    poll = interval(options.pollMs ?? 1000).subscribe(() => {
      if (process.ppid !== parent) end('parent exited');
    });
  }
  const dispose = () => {
    poll?.unsubscribe();
    io.signal?.removeEventListener('abort', onSignal);
    io.stdout.off('close', onStdoutGone);
    // The error listener stays: a write to a closed pipe after this must not crash the process.
  };
  controller.signal.addEventListener('abort', () => poll?.unsubscribe(), { once: true });
  return { signal: controller.signal, dispose };
}
