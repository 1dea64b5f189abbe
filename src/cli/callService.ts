// `rtp` and `media-stream` as services: one life cycle (starting → ready → draining →
// stopped) moved by the signals, the parent's exit and --exit-after; the operator's endpoints
// (/healthz, /readyz, /metrics); with --workers, the same across every worker process; the last
// line counting the calls by outcome and an exit status that says whether one was lost.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { tap, type Observable, type Subscription } from 'rxjs';
import type { CallServer, ServiceLifecycle } from '../service/lifecycle.js';
import { opsAnswer, opsPath, writeOpsAnswer, type OpsAnswer, type OpsPath } from '../service/opsHttp.js';
import type { AnalyzableCall, AnalyzeCallsStats, CallAnalysis } from '../telephony/analyzeCalls.js';
import { workerHandle } from '../telephony/callWorker.js';
import { ClusterMetrics } from '../telephony/clusterMetrics.js';
import { callWorkers, createCallWorkersStats, isCallWorker, type CallWorker, type CallWorkersStats } from '../telephony/callWorkers.js';
import { showCall, type CallViewOptions } from './callView.js';
import type { CliIo } from './command.js';
import type { ModelsEndpoint } from './endpoint.js';
import { DRAIN_OPTION, METRICS_OPTIONS, startCommandService } from './service.js';

/** The command's own script, which each worker runs again with the same arguments. */
const BIN = new URL('../../bin/svc-stream.js', import.meta.url).pathname;

/** The flags every call service takes: the drain, the operator's port. */
export const SERVICE_OPTIONS = { ...DRAIN_OPTION, ...METRICS_OPTIONS } as const;

/** What one process of the service is given to build its calls. */
export interface CallContext {
  /** The process's life cycle (a worker's is its handle's, driven by the primary). */
  readonly lifecycle: ServiceLifecycle;
  /** Under --workers, the worker's handle. */
  readonly worker?: CallWorker | undefined;
  /** For a server with an HTTP port of its own: the operator's paths on it (undefined with --metrics-port). */
  readonly onRequest?: ((req: IncomingMessage, res: ServerResponse) => boolean) | undefined;
  /** The service failed (a demo's player, say): it ends, exit 1. */
  readonly fail: (err: unknown) => void;
  /** A warning said once per process family: a worker hands it to its primary, which says each code once. */
  readonly warn: (code: string, line: string) => void;
}

/** How `serveCalls` runs a command. */
export interface CallServiceOptions {
  readonly command: string;
  readonly workers: number;
  readonly exitAfter: number | undefined;
  readonly drainTimeoutMs: number;
  readonly json: boolean;
  readonly endpoint: ModelsEndpoint;
  readonly metricsPort: number | undefined;
  readonly metricsHost: string;
  /** The command has an HTTP port of its own (media-stream): the operator's paths go there unless --metrics-port. */
  readonly ownHttpPort: boolean;
  /** In one process: the calls' counters, for the last line. */
  readonly callStats: AnalyzeCallsStats;
  /** The source's counters for the last line (`datagrams 7000, legs 20, …`): in one process its stats, across workers their totals. */
  readonly sourceSummary: (totals: Readonly<Record<string, number>> | undefined) => string;
  /** The source's name in the workers' totals (`rtpSource`, `mediaStreamServer`). */
  readonly sourceName: string;
  /** In one process: the source's counters. */
  readonly sourceStats: object;
  /** What the service cannot take calls without (a Redis): attached to the life cycle, unready while down. Closed at the end. */
  readonly dependencies?: readonly (CallServer & { close(): Promise<void> })[] | undefined;
}

/** Whether this process is one of the workers a `--workers` command started. */
export const inCallWorker = isCallWorker;

/**
 * Run the calls of `calls(context)` as a service until it stops, showing each call as
 * `view` says; resolves with the exit status: 0 when every accepted call ended `done`, else 1.
 */
export async function serveCalls<C extends AnalyzableCall>(
  io: CliIo,
  options: CallServiceOptions,
  calls: (context: CallContext) => Observable<CallAnalysis<C>>,
  view: (call: CallAnalysis<C>) => Omit<CallViewOptions, 'onEnd'>,
): Promise<number> {
  if (isCallWorker()) return workerProcess(io, calls, view);
  const err = (line: string): void => void io.stderr.write(`svc-stream: ${line}\n`);
  const cluster = options.workers > 1 ? new ClusterMetrics() : undefined;
  const service = await startCommandService(io, {
    drainTimeoutMs: options.drainTimeoutMs,
    metricsPort: options.metricsPort,
    metricsHost: options.metricsHost,
    ownHttpPort: options.ownHttpPort,
    dependencies: options.dependencies,
    ...(cluster ? { workers: () => cluster.collect() } : {}),
    drainLine: `draining: no new calls; the calls in flight end within ${options.drainTimeoutMs} ms (a second signal ends them now)`,
  });
  const { lifecycle, onRequest, answer } = service;
  let ended = 0;
  const callEnded = (): void => {
    ended++;
    // Never cuts a call in flight: no new call, and the service stops once those running end.
    if (options.exitAfter !== undefined && ended === options.exitAfter) lifecycle.drain('exit-after', Infinity);
  };

  const workersStats = createCallWorkersStats();
  let sub: Subscription | undefined;
  let failure: unknown;
  const failed = new Promise<void>((resolve) => {
    const fail = (e: unknown): void => {
      failure ??= e;
      resolve();
    };
    const warned = new Set<string>();
    const warn = (code: string, line: string): void => {
      if (warned.has(code)) return;
      warned.add(code);
      err(line);
    };
    if (cluster === undefined) {
      sub = calls({ lifecycle, onRequest, fail, warn }).subscribe({
        next: (call) => showCall(call, { ...view(call), onEnd: callEnded }),
        error: fail,
      });
    } else {
      sub = primary(io, options, lifecycle, cluster, workersStats, answer, callEnded, warn, calls, view).subscribe({ error: fail, complete: () => resolve() });
    }
  });
  try {
    await Promise.race([service.stopped, failed]);
  } finally {
    sub?.unsubscribe();
    await service.close();
  }
  if (failure !== undefined) throw failure;
  // The last line: the calls by outcome.
  if (cluster === undefined) {
    const s = options.callStats;
    err(`${s.calls} call(s): ${s.done} done, ${s.failed} failed, ${s.shutdown} shutdown, ${s.rejected} rejected; ${options.sourceSummary(options.sourceStats as Record<string, number>)}`);
    return s.failed + s.shutdown > 0 ? 1 : 0;
  }
  const w = workersStats;
  err(
    `${w.calls} call(s): ${w.done} done, ${w.failed} failed (${w.lost} lost with a worker), ${w.shutdown} shutdown, ${w.rejected} rejected; ${w.restarts} worker restart(s)${w.packetsLostWithWorker > 0 ? ` (${w.packetsLostWithWorker} packets lost with the workers)` : ''}; ${options.sourceSummary(w.totals[options.sourceName])}`,
  );
  return w.failed + w.shutdown > 0 ? 1 : 0;
}

/** The primary of `--workers`: forks, drives the workers' life cycles with its own, prints what only it knows. */
function primary<C extends AnalyzableCall>(
  io: CliIo,
  options: CallServiceOptions,
  lifecycle: ServiceLifecycle,
  cluster: ClusterMetrics,
  stats: CallWorkersStats,
  answer: (path: OpsPath) => Promise<OpsAnswer>,
  callEnded: () => void,
  warn: (code: string, line: string) => void,
  calls: (context: CallContext) => Observable<CallAnalysis<C>>,
  view: (call: CallAnalysis<C>) => Omit<CallViewOptions, 'onEnd'>,
): Observable<unknown> {
  const out = (line: string): void => void io.stdout.write(`${line}\n`);
  const err = (line: string): void => void io.stderr.write(`svc-stream: ${line}\n`);
  const listening = new Set<number>();
  return callWorkers(
    {
      workers: options.workers,
      exec: BIN,
      args: process.argv.slice(2),
      env: { SVC_BASE_URL: options.endpoint.baseUrl, SVC_API_KEY: options.endpoint.apiKey },
      stats,
      lifecycle,
      metrics: cluster,
      ops: answer,
    },
    // In a worker (never here): see workerProcess.
    (worker) => calls({ lifecycle: worker.lifecycle, worker, fail: () => undefined, warn: () => undefined }).pipe(tap((call) => showCall(call, view(call)))),
  ).pipe(
    tap((e) => {
      if (e.type === 'worker-started') err(`worker ${e.index} ${e.restart ? 'restarted' : 'started'} (pid ${e.pid})`);
      else if (e.type === 'listening') {
        listening.add(e.index);
        if (listening.size === options.workers) lifecycle.ready();
      } else if (e.type === 'warning') warn(e.code, e.line);
      else if (e.type === 'worker-exited') {
        err(`worker ${e.index} (pid ${e.pid}) exited ${e.signal ? `on ${e.signal}` : `with code ${e.code}`}${e.lostCalls.length ? `; its ${e.lostCalls.length} call(s) ended worker_exited` : ''}${e.restarting ? '; restarting it' : ''}`);
      } else if (e.type === 'call-ended') {
        // The worker printed its own calls' ends; the calls it took with it, the primary prints.
        if (e.error?.code === 'worker_exited') {
          if (options.json) out(JSON.stringify({ type: 'call_end', id: e.id, status: e.status, error: { code: e.error.code, message: e.error.message } }));
          else out(`${e.id} ${e.status} ${e.error.code}: ${e.error.message}`);
        }
        callEnded();
      }
    }),
  );
}

/** A worker of `--workers`: its calls until its life cycle (the primary's word) stops; the operator's paths that reach it are the primary's to answer. */
function workerProcess<C extends AnalyzableCall>(
  io: CliIo,
  calls: (context: CallContext) => Observable<CallAnalysis<C>>,
  view: (call: CallAnalysis<C>) => Omit<CallViewOptions, 'onEnd'>,
): Promise<number> {
  return new Promise<number>((resolve, reject) => {
    callWorkers({}, (worker) => {
      const handle = workerHandle(worker)!;
      const onRequest = (req: IncomingMessage, res: ServerResponse): boolean => {
        const path = opsPath(req.url);
        if (path === undefined) return false;
        // Alive is this process's to say; ready and the figures are the whole service's.
        const answered = path === '/healthz' ? opsAnswer(path, { readiness: () => worker.lifecycle.readiness, metrics: async () => ({ unavailable: '' }) }) : handle.scrape(path);
        void answered.then((a) => writeOpsAnswer(req, res, a));
        return true;
      };
      const warn = (code: string, line: string): void => handle.warn(code, line);
      return calls({ lifecycle: worker.lifecycle, worker, onRequest, fail: (e) => reject(e), warn }).pipe(tap((call) => showCall(call, view(call))));
    }).subscribe({ error: reject, complete: () => resolve(0) });
    void io;
  });
}


