// `rtp` and `media-stream` with `--workers N`: the command runs again in N worker processes,
// each printing its own calls as `showCalls` does; the primary prints what only it knows (the
// calls a dead worker took with it, workers restarted) and the totals over every worker.
import { tap, type Observable } from 'rxjs';
import type { AnalyzableCall, CallAnalysis } from '../telephony/analyzeCalls.js';
import { callWorkers, createCallWorkersStats, isCallWorker, type CallWorker, type CallWorkersStats } from '../telephony/callWorkers.js';
import { runUntil, showCall, type CallViewOptions } from './callView.js';
import type { CliIo } from './command.js';
import type { ModelsEndpoint } from './endpoint.js';

/** The command's own script, which each worker runs again with the same arguments. */
const BIN = new URL('../../bin/svc-stream.js', import.meta.url).pathname;

export interface WorkersViewOptions {
  readonly workers: number;
  readonly exitAfter: number | undefined;
  readonly json: boolean;
  /** Where the sessions go: the workers are told, so an embedded emulator stays one, in the primary. */
  readonly endpoint: ModelsEndpoint;
  /** The totals line at the end, from the counters added up over the workers. */
  readonly summary: (stats: CallWorkersStats) => string;
}

/** Whether this process is one of the workers a `--workers` command started. */
export const inCallWorker = isCallWorker;

/**
 * Show every call across `workers` processes until `exitAfter` calls have ended (in any
 * worker, those of a dead worker included) or the command is interrupted; resolves 0.
 */
export function showCallsOnWorkers<C extends AnalyzableCall>(
  io: CliIo,
  options: WorkersViewOptions,
  calls: (worker: CallWorker) => Observable<CallAnalysis<C>>,
  view: (call: CallAnalysis<C>) => Omit<CallViewOptions, 'onEnd'>,
): Promise<number> {
  const stats = createCallWorkersStats();
  const run$ = callWorkers(
    {
      workers: options.workers,
      exec: BIN,
      args: process.argv.slice(2),
      env: { SVC_BASE_URL: options.endpoint.baseUrl, SVC_API_KEY: options.endpoint.apiKey },
      stats,
    },
    // In a worker: its calls, each shown as one process shows it.
    (worker) => calls(worker).pipe(tap((call) => showCall(call, view(call)))),
  );
  const out = (line: string): void => void io.stdout.write(`${line}\n`);
  const err = (line: string): void => void io.stderr.write(`svc-stream: ${line}\n`);
  let ended = 0;
  return runUntil(
    io,
    (end) =>
      run$.subscribe({
        next: (e) => {
          if (e.type === 'worker-started') err(`worker ${e.index} ${e.restart ? 'restarted' : 'started'} (pid ${e.pid})`);
          else if (e.type === 'worker-exited') {
            err(`worker ${e.index} (pid ${e.pid}) exited ${e.signal ? `on ${e.signal}` : `with code ${e.code}`}${e.lostCalls.length ? `; its ${e.lostCalls.length} call(s) ended worker_exited` : ''}${e.restarting ? '; restarting it' : ''}`);
          } else if (e.type === 'call-ended') {
            // The worker printed its own calls' ends; the calls it took with it, the primary prints.
            if (e.error?.code === 'worker_exited') {
              if (options.json) out(JSON.stringify({ type: 'call_end', id: e.id, status: e.status, error: { code: e.error.code, message: e.error.message } }));
              else out(`${e.id} ${e.status} ${e.error.code}: ${e.error.message}`);
            }
            ended++;
            if (options.exitAfter !== undefined && ended >= options.exitAfter) end({ code: 0 });
          }
        },
        error: (error: unknown) => end({ error }),
        complete: () => end({ code: 0 }),
      }),
    // A worker's observable emits nothing (its events are the primary's): only the primary sums up.
    () => {
      if (!isCallWorker()) err(options.summary(stats));
    },
  );
}

/** The totals line: workers, calls and the source's counters over every worker. */
export function workersSummary(stats: CallWorkersStats, source: string, keys: readonly string[]): string {
  const s = stats.totals[source] ?? {};
  const c = stats.totals['analyzeCalls'] ?? {};
  const parts = keys.map((k) => `${k} ${s[k] ?? 0}`);
  return `${stats.workers} worker(s) running, ${stats.restarts} restart(s): ${stats.calls} calls, ${c['done'] ?? 0} done, ${c['failed'] ?? 0} failed, ${c['rejected'] ?? 0} rejected, ${stats.lost} lost with a worker; ${parts.join(', ')}`;
}
