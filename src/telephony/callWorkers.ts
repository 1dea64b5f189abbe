// Live calls on every core: a primary process forks N workers (node:cluster) that each run the
// same pipeline (a source → analyzeCalls); the primary holds the bounds they share, adds up their
// counters, restarts a worker that dies and ends that worker's calls with a typed outcome.
// This file forks, restarts and reports; the bounds and slots are PrimaryBounds.ts's, the
// counters' totals WorkerTotals.ts's, a worker's side of the protocol callWorker.ts's.
import cluster, { type Worker } from 'node:cluster';
import { availableParallelism } from 'node:os';
import { Observable, type Subscription } from 'rxjs';
import { SvcError } from '../errors/index.js';
import { positiveInteger } from '../internal/positiveOption.js';
import type { AnalyzableCall, CallAnalysis } from './analyzeCalls.js';
import { WorkerHandle, type CallWorker, type PrimaryMessage, type WorkerMessage } from './callWorker.js';
import { PrimaryBounds } from './PrimaryBounds.js';
import { WorkerTotals } from './WorkerTotals.js';
import type { ServiceLifecycle } from '../service/lifecycle.js';
import type { MetricSample } from '../service/metric.js';
import type { OpsAnswer, OpsPath } from '../service/opsHttp.js';
import type { ClusterMetrics } from './clusterMetrics.js';
import { outcomeLabel } from './callMetrics.js';

export type { CallWorker } from './callWorker.js';

/** Set in a worker's environment: its place (the primary sets it; a restarted worker keeps the place). */
const WORKER_ENV = 'SVC_STREAM_WORKER';
const WORKERS_ENV = 'SVC_STREAM_WORKERS';

/** Options of {@link callWorkers}. */
export interface CallWorkersOptions {
  /** Worker processes (default: `os.availableParallelism()`). */
  readonly workers?: number | undefined;
  /** The script each worker runs (default: the running script, `process.argv[1]`, as node:cluster does). */
  readonly exec?: string | undefined;
  /** Its arguments (default: this process's, `process.argv.slice(2)`). */
  readonly args?: readonly string[] | undefined;
  /** Environment added to each worker's (the service's base URL and key, say). */
  readonly env?: Readonly<Record<string, string>> | undefined;
  /** Restart a worker that exits while the cluster runs (default true). */
  readonly restart?: boolean | undefined;
  /** Live counters over the workers, updated in place (see {@link CallWorkersStats}). */
  readonly stats?: CallWorkersStats | undefined;
  /**
   * The primary's life cycle (`ServiceLifecycle`): the cluster attaches to it as one
   * `CallServer` whose calls in flight are every worker's. Draining, every worker stops taking
   * calls (each source refuses its way) and no worker is restarted; forced, every worker ends
   * its calls `shutdown` (a worker that has not within 5 s is killed, its calls `worker_exited`).
   * `/readyz` is false while every shared session slot is held under `whenFull: 'reject'`.
   */
  readonly lifecycle?: ServiceLifecycle | undefined;
  /** Collect every worker's registry for the primary's `/metrics` (see `ClusterMetrics`). */
  readonly metrics?: ClusterMetrics | undefined;
  /** How the primary answers an operator's request (`/metrics`, `/readyz`) that reached a worker's shared port. */
  readonly ops?: ((path: OpsPath) => Promise<OpsAnswer>) | undefined;
}

/** The cluster's counters, in the primary, updated in place. */
export interface CallWorkersStats {
  /** Workers running now. */
  workers: number;
  /** Workers restarted (or being restarted) after an exit. */
  restarts: number;
  /** Calls started in any worker. */
  calls: number;
  /** Calls ended (in any way, those of an exited worker included). */
  ended: number;
  /** Calls ended by their worker's exit (`worker_exited`). */
  lost: number;
  /** Calls ended by outcome, over every worker (a partition of `ended`): `done`; `failed` (those `lost` included); `shutdown` (the service's drain deadline or a second signal); `rejected` (refused: full under `whenFull: 'reject'`, waited too long, or the service draining). */
  done: number;
  failed: number;
  shutdown: number;
  rejected: number;
  /**
   * Packets of calls that went on after their worker died (an RTP leg resumed on the restarted
   * worker), told by their sequence numbers: those between the dead worker's last report and the
   * new leg's first packet. The dead worker received some of them after its last report and the
   * kernel dropped the rest while no worker listened; which of the two cannot be known. A call
   * that does not go on leaves no number to tell its end by: its packets after the last report
   * are not counted anywhere.
   */
  packetsLostWithWorker: number;
  /**
   * The counters of each worker's sources and analyzeCalls, added up over the workers, by name:
   * `rtpSource` (RtpSourceStats), `mediaStreamServer` (MediaStreamServerStats), `analyzeCalls`
   * (AnalyzeCallsStats). Counts add up over every worker that ever ran; what is a level
   * (`running`, `queued`) adds up over the workers running now.
   */
  readonly totals: Record<string, Record<string, number>>;
}

/** Fresh {@link CallWorkersStats}, every counter at zero. */
export function createCallWorkersStats(): CallWorkersStats {
  return { workers: 0, restarts: 0, calls: 0, ended: 0, lost: 0, done: 0, failed: 0, shutdown: 0, rejected: 0, packetsLostWithWorker: 0, totals: {} };
}

/** What the cluster says, in the primary. */
export type CallWorkersEvent =
  | { readonly type: 'worker-started'; readonly index: number; readonly pid: number; readonly restart: boolean }
  | { readonly type: 'listening'; readonly index: number; readonly port: number }
  | { readonly type: 'call'; readonly index: number; readonly id: string; readonly info: Readonly<Record<string, unknown>> }
  /** A call ended: its outcome's status, and its error (a `worker_exited` SvcError when its worker died, else the code and message the worker saw). */
  | { readonly type: 'call-ended'; readonly index: number; readonly id: string; readonly status: string; readonly error?: { readonly code: string; readonly message: string } | undefined }
  | { readonly type: 'worker-exited'; readonly index: number; readonly pid: number; readonly code: number | null; readonly signal: string | null; readonly lostCalls: readonly string[]; readonly restarting: boolean }
  /** A warning a worker handed to the primary (`CallWorker`'s `warn`), the first time its `code` is seen in any worker: said once for the service. */
  | { readonly type: 'warning'; readonly index: number; readonly code: string; readonly line: string };

/** Whether this process is a worker that {@link callWorkers} started. */
export function isCallWorker(): boolean {
  return cluster.isWorker && process.env[WORKER_ENV] !== undefined;
}

/**
 * Run live calls on every core: the same pipeline in N worker processes, one bound.
 *
 * - In the primary (the process you start), subscribing forks `workers` processes running
 *   `exec` (this script by default, node:cluster's way: the same code runs again in each
 *   worker, so call `callWorkers` at the top level of it) and emits what they do: each worker
 *   started, each call started and ended, each worker that exited. Unsubscribing stops them.
 * - In each worker, the same call runs `work(worker)` (and emits nothing: every event is the
 *   primary's, so a subscriber that logs does not log twice): build the pipeline there, passing
 *   `worker` to the source (`rtpSource({ worker })`: one port per worker from `port`, or
 *   `reusePort`; `mediaStreamServer({ worker })`: one port shared through node:cluster's
 *   round-robin) and to `analyzeCalls({ worker })`. The bounds of those options (`maxLegs`,
 *   `maxConnections`, `maxConcurrent`) then hold across every worker, the primary keeping the
 *   count; the organization's slots through Redis (`limiter`) are shared by design.
 * - Counters add up in the primary (`stats.totals`); every call a worker starts is reported,
 *   and when a worker exits before its calls end, each of them ends with a `worker_exited`
 *   error (never silently) and the worker is restarted in the same place (same RTP port).
 * - Never errors in the primary except on bad options; a worker's failure is an event.
 *
 * ## Example
 * ```ts
 * import { analyzeCalls, callWorkers, mediaStreamServer } from 'svc-stream/telephony';
 *
 * // Runs in the primary and in each of the 4 workers (node:cluster runs this script again).
 * callWorkers({ workers: 4 }, (worker) =>
 *   analyzeCalls(mediaStreamServer({ port: 8080, maxConnections: 1000, worker }), { maxConcurrent: 1000, worker }),
 * ).subscribe((e) => {
 *   if (e.type === 'call-ended') console.log(e.id, e.status, e.error?.code ?? '');
 * });
 * ```
 */
export function callWorkers<C extends AnalyzableCall>(options: CallWorkersOptions, work: (worker: CallWorker) => Observable<CallAnalysis<C>>): Observable<CallWorkersEvent> {
  const n = positiveInteger('callWorkers', 'workers', options.workers, availableParallelism());
  return isCallWorker() ? workerSide(work) : primarySide(n, options);
}

/** A worker: run the pipeline with a handle on the primary; its calls are the primary's to report (the worker's observable emits nothing). */
function workerSide<C extends AnalyzableCall>(work: (worker: CallWorker) => Observable<CallAnalysis<C>>): Observable<CallWorkersEvent> {
  return new Observable<CallWorkersEvent>((subscriber) => {
    const handle = new WorkerHandle(Number(process.env[WORKER_ENV]), Number(process.env[WORKERS_ENV] ?? 1), (m) => {
      if (process.connected) process.send!(m);
    });
    const onMessage = (m: unknown): void => {
      if (typeof (m as { t?: unknown })?.t === 'string' && (m as { t: string }).t.startsWith('svcw:')) handle.receive(m as PrimaryMessage);
    };
    process.on('message', onMessage);
    let sub: Subscription | undefined;
    handle.onStop = () => sub?.unsubscribe();
    // Drained (the primary's word) and every call ended: the last report, then the worker's work is done.
    const stopped = handle.lifecycle.state$.subscribe((s) => {
      if (s.status !== 'stopped') return;
      void handle.finalReport().then(() => {
        sub?.unsubscribe();
        subscriber.complete();
      });
    });
    // analyzeCalls, given the handle, tells the primary of each call before anyone sees it; a
    // pipeline that did not give it the handle still has each call told here, as it comes out.
    sub = work(handle).subscribe({
      next: (call) => {
        handle.callStarted(call.id, {});
        // Completes with the outcome: nothing to keep per call.
        call.outcome$.subscribe((o) => handle.callEnded(call.id, o.status, o.error));
      },
      error: (err: unknown) => subscriber.error(err),
      complete: () => subscriber.complete(),
    });
    return () => {
      stopped.unsubscribe();
      sub?.unsubscribe();
      handle.close();
      process.off('message', onMessage);
    };
  });
}

/** The primary: fork, hold the bounds and slots, add up counters, restart and report. */
function primarySide(n: number, options: CallWorkersOptions): Observable<CallWorkersEvent> {
  return new Observable<CallWorkersEvent>((subscriber) => {
    const stats = options.stats ?? createCallWorkersStats();
    const restart = options.restart !== false;
    cluster.setupPrimary({
      exec: options.exec ?? process.argv[1]!,
      args: [...(options.args ?? process.argv.slice(2))],
    });
    const slots = new Map<number, Worker>();
    const bounds = new PrimaryBounds((m) => broadcast(m));
    const totals = new WorkerTotals(stats.totals);
    /** Calls running per worker (so the primary can end them if the worker dies). */
    const calls = new Map<number, Set<string>>();
    const alive = new Set<number>();
    /** Workers whose sources listen: one that exits before it ever did failed to start, and is not restarted. */
    const listened = new Set<number>();
    let stopping = false;
    let draining = false;
    /** Warning codes a worker said already. */
    const warned = new Set<string>();
    /** Each worker's numbered calls: how far each had come at the worker's last report (16-bit sequence numbers). */
    const marks = new Map<number, Map<string, number>>();
    /** Numbered calls of dead workers, by id: the last number reported, until the call goes on as a new leg (bounded). */
    const gone = new Map<string, number>();
    const backoff = new Map<number, number>();
    /** Ended calls by outcome and code (`outcome\0code`): the primary hears of every end, a dead worker's included. */
    const endings = new Map<string, number>();
    const ended = (status: string, error: { readonly code: string } | undefined): void => {
      const outcome = outcomeLabel({ status: status as 'done', error });
      stats[outcome]++;
      const key = `${outcome}\0${error?.code ?? ''}`;
      endings.set(key, (endings.get(key) ?? 0) + 1);
    };
    const inFlight = (): number => {
      let n = 0;
      for (const c of calls.values()) n += c.size;
      return n;
    };
    const broadcast = (m: PrimaryMessage): void => {
      for (const w of slots.values()) if (w.isConnected()) w.send(m);
    };
    let forceKill: ReturnType<typeof setTimeout> | undefined;
    const attached = options.lifecycle?.attach({
      get inFlight() {
        return inFlight();
      },
      stopAccepting: () => {
        draining = true;
        broadcast({ t: 'svcw:drain', reason: 'primary' });
      },
      endCalls: (error) => {
        broadcast({ t: 'svcw:force', reason: error.message });
        // A worker that does not end its calls is killed: they end worker_exited.
        forceKill = setTimeout(() => {
          for (const [index, w] of slots) if ((calls.get(index)?.size ?? 0) > 0) w.process.kill('SIGKILL');
        }, 5_000);
        forceKill.unref();
      },
      get unready() {
        return bounds.unready;
      },
      metrics: () => [
        { name: 'svc_stream_workers', help: 'Worker processes running now.', type: 'gauge', samples: () => [{ value: stats.workers }] },
        { name: 'svc_stream_worker_restarts_total', help: 'Workers restarted after an exit.', type: 'counter', samples: () => [{ value: stats.restarts }] },
        {
          name: 'svc_stream_packets_lost_with_worker_total',
          help: 'Packets of calls that went on after their worker died, between its last report and the new leg (received unreported, or dropped while no worker listened).',
          type: 'counter',
          labels: ['source'],
          samples: () => [{ labels: { source: 'rtp' }, value: stats.packetsLostWithWorker }],
        },
        { name: 'svc_stream_calls_started_total', help: 'Calls accepted (each call, or track, analysed in its own session).', type: 'counter', samples: () => [{ value: stats.calls }] },
        {
          name: 'svc_stream_calls_ended_total',
          help: 'Calls ended, by outcome (done, failed, rejected, shutdown) and error code (empty when done).',
          type: 'counter',
          labels: ['outcome', 'code'],
          samples: (): MetricSample[] =>
            [...endings].map(([key, value]) => {
              const [outcome, code] = key.split('\0') as [string, string];
              return { labels: { outcome, code }, value };
            }),
        },
      ],
    });

    const onMessage = (index: number, worker: Worker, m: WorkerMessage): void => {
      // A message still in the pipe when its worker's exit was handled: its last report is the
      // one that came before (counters and sequence numbers stay one moment's), and its calls are ended.
      if (slots.get(index) !== worker) return;
      switch (m.t) {
        case 'svcw:take':
          return bounds.take(index, worker, m.bound, m.limit, m.id);
        case 'svcw:give':
          return bounds.give(index, m.bound);
        case 'svcw:acquire':
          return bounds.acquire(index, worker, m.id, m.limit, m.wait);
        case 'svcw:withdraw':
          return bounds.withdraw(index, m.id);
        case 'svcw:release':
          return bounds.release(index, m.id);
        case 'svcw:call':
          calls.get(index)?.add(m.id);
          stats.calls++;
          subscriber.next({ type: 'call', index, id: m.id, info: m.info });
          return;
        case 'svcw:call-end':
          marks.get(index)?.delete(m.id);
          if (!calls.get(index)?.delete(m.id)) return;
          stats.ended++;
          ended(m.status, m.error);
          subscriber.next({ type: 'call-ended', index, id: m.id, status: m.status, ...(m.error ? { error: m.error } : {}) });
          attached?.changed();
          return;
        case 'svcw:stats': {
          totals.reportAll(worker.id, m.stats);
          if (m.seqs) {
            const mine = marksOf(index);
            for (const [id, seq] of m.seqs) if (mine.has(id)) mine.set(id, seq);
          }
          return;
        }
        case 'svcw:listening':
          listened.add(index);
          subscriber.next({ type: 'listening', index, port: m.port });
          return;
        case 'svcw:metrics':
          return options.metrics?.report(worker.id, m.json, m.id);
        case 'svcw:mark': {
          const before = gone.get(m.id);
          gone.delete(m.id);
          // The call goes on after its worker died: what fell between is lost with the worker.
          if (before !== undefined) {
            const gap = (m.first - before - 1) & 0xffff;
            if (gap < 0x8000) stats.packetsLostWithWorker += gap;
          }
          // As far as the counters sent before (with the call's start) count.
          marksOf(index).set(m.id, m.seq);
          return;
        }
        case 'svcw:warn':
          if (warned.has(m.code)) return;
          warned.add(m.code);
          subscriber.next({ type: 'warning', index, code: m.code, line: m.line });
          return;
        case 'svcw:scrape':
          if (!options.ops) return void worker.send({ t: 'svcw:scraped', id: m.id, answer: { status: 404, contentType: 'text/plain', body: 'not served\n' } } satisfies PrimaryMessage);
          void options.ops(m.path).then(
            (answer) => worker.isConnected() && worker.send({ t: 'svcw:scraped', id: m.id, answer } satisfies PrimaryMessage),
            (err: unknown) => worker.isConnected() && worker.send({ t: 'svcw:scraped', id: m.id, answer: { status: 500, contentType: 'text/plain', body: `${String(err)}\n` } } satisfies PrimaryMessage),
          );
          return;
      }
    };

    /** A worker is gone: free what it held, end its calls, start another in its place. */
    const onExit = (index: number, worker: Worker, code: number | null, signal: string | null): void => {
      if (slots.get(index) !== worker) return;
      slots.delete(index);
      alive.delete(index);
      stats.workers = alive.size;
      bounds.workerGone(index);
      totals.exited(worker.id);
      options.metrics?.exited(worker.id);
      const lost = [...(calls.get(index) ?? [])];
      calls.delete(index);
      // Where its numbered calls were at its last report: a call that goes on elsewhere tells the rest.
      for (const [id, seq] of marks.get(index) ?? []) {
        gone.set(id, seq);
        if (gone.size > 10_000) gone.delete(gone.keys().next().value!);
      }
      marks.delete(index);
      // A worker that never came up (a port taken, a bad option) would fail again: the cluster fails instead.
      if (!listened.has(index) && !stopping) {
        stopping = true;
        stop();
        subscriber.error(new SvcError('worker_exited', `worker ${index} (pid ${worker.process.pid}) exited ${signal ? `on ${signal}` : `with code ${code}`} before it listened: it could not start (its own error is on stderr)`));
        return;
      }
      // Draining, a worker that exits is not replaced: it takes no call any more.
      const restarting = restart && !stopping && !draining;
      for (const id of lost) {
        stats.ended++;
        stats.lost++;
        const error = new SvcError('worker_exited', `call ${id} ended: its worker (${index}, pid ${worker.process.pid}) exited ${signal ? `on ${signal}` : `with code ${code}`} before the call ended${restarting ? '; the worker is restarted' : ''}`);
        ended('error', error);
        subscriber.next({ type: 'call-ended', index, id, status: 'error', error });
      }
      subscriber.next({ type: 'worker-exited', index, pid: worker.process.pid!, code, signal, lostCalls: lost, restarting });
      attached?.changed();
      if (!restarting) return;
      stats.restarts++;
      // A worker that keeps dying waits longer each time (from 100 ms up to 5 s), so a crash loop does not spin.
      const wait = backoff.get(index) ?? 0;
      backoff.set(index, Math.min(5000, Math.max(100, wait * 2)));
      setTimeout(() => {
        if (!stopping) start(index, true);
      }, wait).unref();
    };

    const marksOf = (index: number): Map<string, number> => {
      let m = marks.get(index);
      if (!m) marks.set(index, (m = new Map()));
      return m;
    };

    /** A worker that listens for the primary's messages: tell it what is full now, whether the service drains, and that its figures are wanted. */
    const greet = (worker: Worker): void => {
      for (const m of bounds.fullNow()) worker.send(m);
      if (draining) worker.send({ t: 'svcw:drain', reason: 'primary' } satisfies PrimaryMessage);
      options.metrics?.online(worker.id, worker);
    };

    const start = (index: number, again: boolean): void => {
      const worker = cluster.fork({ ...options.env, [WORKER_ENV]: String(index), [WORKERS_ENV]: String(n) });
      slots.set(index, worker);
      calls.set(index, new Set());
      let heard = false;
      worker.on('message', (m: unknown) => {
        if (typeof (m as { t?: unknown })?.t !== 'string' || !(m as { t: string }).t.startsWith('svcw:')) return;
        // Its first message says it listens for ours: only now can it be told anything.
        if (!heard) {
          heard = true;
          greet(worker);
        }
        onMessage(index, worker, m as WorkerMessage);
      });
      worker.once('online', () => {
        alive.add(index);
        totals.started(worker.id);
        stats.workers = alive.size;
        subscriber.next({ type: 'worker-started', index, pid: worker.process.pid!, restart: again });
        // A worker that stays up a minute is healthy again.
        setTimeout(() => {
          if (slots.get(index) === worker) backoff.delete(index);
        }, 60_000).unref();
      });
      // Its exit is handled once every message it sent before dying is read (the IPC channel
      // closed), so its last report is whole: the counters and sequence numbers of one moment.
      worker.once('exit', (code, signal) => {
        if (!worker.isConnected()) return onExit(index, worker, code, signal);
        const t = setTimeout(() => onExit(index, worker, code, signal), 5_000);
        worker.once('disconnect', () => {
          clearTimeout(t);
          onExit(index, worker, code, signal);
        });
      });
    };
    const stop = (): void => {
      for (const w of slots.values()) {
        if (w.isConnected()) w.send({ t: 'svcw:stop' } satisfies PrimaryMessage);
        // The signal itself (cluster's kill() waits for a disconnect a worker still starting may not answer).
        w.process.kill('SIGTERM');
        const t = setTimeout(() => w.process.kill('SIGKILL'), 5000);
        t.unref();
        w.once('exit', () => clearTimeout(t));
      }
    };
    for (let i = 0; i < n; i++) start(i, false);

    return () => {
      stopping = true;
      clearTimeout(forceKill);
      attached?.detach();
      stop();
    };
  });
}
