// One conversation-analysis session per incoming call, under a concurrency bound that either
// queues or rejects calls beyond it; a call's failure is its own and never ends the others.
import { asyncScheduler, Observable } from 'rxjs';
import { InputError, SessionError } from '../errors/index.js';
import { operatorSubscriber } from '../internal/operate.js';
import { positiveInteger } from '../internal/positiveOption.js';
import type { ConversationOptions } from '../session/conversation.js';
import { workerHandle, type CallWorker } from './callWorker.js';
import { CallRun, type CallRunContext } from './CallRun.js';
import type { AnalyzableCall, AnalyzeCallsStats, CallAnalysis } from './callAnalysis.js';

export type { AnalyzableCall, AnalyzeCallsStats, CallAnalysis, CallOutcome, CallStatus } from './callAnalysis.js';
import type { Publisher } from '../publishing.js';
import { localSlots, workerSlots } from './callSlots.js';
import type { ServiceLifecycle } from '../service/lifecycle.js';
import { callStartChannel } from '../service/channels.js';
import { CallTally } from './callMetrics.js';

/** How long a call waits for a session slot by default before it is refused: {@link AnalyzeCallsOptions.maxQueueMs}. */
export const DEFAULT_MAX_QUEUE_MS = 5_000;

/** Fresh {@link AnalyzeCallsStats}, every counter at zero; pass it as `stats` and read it while calls run. */
export function createAnalyzeCallsStats(): AnalyzeCallsStats {
  return { calls: 0, queued: 0, running: 0, peakRunning: 0, done: 0, failed: 0, shutdown: 0, rejected: 0, queueTimeouts: 0, peakQueuedMs: 0 };
}

export interface AnalyzeCallsOptions<C extends AnalyzableCall = AnalyzableCall> extends ConversationOptions {
  /** Sessions at once (default 3, the service's stated default per model, §8). */
  readonly maxConcurrent?: number | undefined;
  /** Beyond the bound: wait for a free session (`queue`, default) or refuse the call (`reject`). */
  readonly whenFull?: 'queue' | 'reject' | undefined;
  /**
   * The longest a call waits for a session slot before it is refused (`rejected`, with a
   * `SessionError('concurrency_limit')`, counted in `queueTimeouts`). Default 5000 ms: live
   * audio analysed later than that is stale, while a short wait absorbs the gap until a call
   * ends. `Infinity` keeps an unbounded queue (recorded calls, where lateness does not matter).
   */
  readonly maxQueueMs?: number | undefined;
  /** Per-call session options over the shared ones (e.g. a key per organization). */
  readonly sessionOptions?: ((call: C, index: number) => ConversationOptions) | undefined;
  /** Drain the audio of a rejected call so a live source does not keep it (default true). */
  readonly drainRejected?: boolean | undefined;
  /** Counters over all calls (the per-call session counters are on each `CallAnalysis`). */
  readonly callStats?: AnalyzeCallsStats | undefined;
  /**
   * The worker handle `callWorkers` gives each worker process: `maxConcurrent` then bounds the
   * sessions of every worker together (first come, first served across them), and `callStats`
   * add up in the primary.
   */
  readonly worker?: CallWorker | undefined;
  /**
   * Publish every call's session to Redis Streams under its call id (`createPublisher` of
   * 'svc-stream/fleet'), for relays and the supervisor's page anywhere in the fleet
   * (docs/fleet.md). Publishing never delays or fails a call.
   */
  readonly publish?: Publisher | undefined;
  /**
   * The service's life cycle (`ServiceLifecycle`): the calls attach to it as one `CallServer`.
   * Draining, a call that still arrives is refused (`rejected`, code `shutdown`) while those in
   * flight run on; forced (the deadline, a second signal), each call in flight ends at once,
   * `status: 'error'` with a `shutdown` error carrying its audio account. `/readyz` is false
   * while every slot is taken under `whenFull: 'reject'`. Its metrics are the calls' (started,
   * active, queued, ended by outcome and code) and their sessions' (frames, bytes, reconnects,
   * events by type). Under `callWorkers`, the worker's own life cycle is used by default.
   */
  readonly lifecycle?: ServiceLifecycle | undefined;
}

/**
 * Analyse every call of `calls$` in its own conversation session.
 *
 * - Emits one {@link CallAnalysis} per call as it arrives (queued, running or rejected), and
 *   drives its session itself: the call's `streams` can be subscribed to at any time and
 *   replay the current state.
 * - At most `maxConcurrent` sessions run at once. With `whenFull: 'queue'` a call waits (its
 *   live audio is kept, see `LiveAudio`) and starts when a session ends, first come first
 *   served, for at most `maxQueueMs` (default 5 s; then it is refused as stale); with
 *   `'reject'` it is emitted with status `rejected` and an outcome carrying a
 *   `SessionError('concurrency_limit')`. A refused call is never silently dropped: its
 *   outcome says why and `callStats` counts it (`rejected`, `queueTimeouts`).
 * - A call's session error ends that call only: `outcome$` reports it (`status: 'error'`), and
 *   the call's `streams` complete with their last state instead of erroring, so a per-call
 *   subscription without an error callback never raises an unhandled error. The only stream
 *   here that errors is the result itself: when `calls$` errors, or an option (say
 *   `sessionOptions`) throws.
 * - Completes when `calls$` has completed and every call has ended. Unsubscribing closes
 *   every session. Cold: each subscription subscribes to `calls$` once.
 *
 * ## Example
 * ```ts
 * import { analyzeCalls, rtpSource } from 'svc-stream/telephony';
 *
 * analyzeCalls(rtpSource({ port: 5004 }), { maxConcurrent: 10, whenFull: 'queue' }).subscribe({
 *   next: (call) => {
 *     // Per-call streams never error; a failed call's error is its outcome.
 *     call.streams.currentRoles$.subscribe((roles) => console.log(call.id, roles.toArray().map((r) => r.name)));
 *     call.outcome$.subscribe((o) => console.log(call.id, o.status, o.error ?? ''));
 *   },
 *   error: (err: unknown) => console.error('calls stopped:', err), // the call source failed
 * });
 * ```
 */
export function analyzeCalls<C extends AnalyzableCall>(calls$: Observable<C>, options: AnalyzeCallsOptions<C> = {}): Observable<CallAnalysis<C>> {
  const max = positiveInteger('analyzeCalls', 'maxConcurrent', options.maxConcurrent, 3);
  const whenFull = options.whenFull ?? 'queue';
  const maxQueueMs = options.maxQueueMs ?? DEFAULT_MAX_QUEUE_MS;
  if (!(maxQueueMs >= 0)) throw new InputError('invalid_argument', `maxQueueMs must be 0 or more, got ${maxQueueMs}`);
  const scheduler = options.scheduler ?? asyncScheduler;
  const handle = workerHandle(options.worker);
  const { maxConcurrent: _m, whenFull: _w, maxQueueMs: _q, sessionOptions, drainRejected, callStats, stats: _s, worker: _k, publish, lifecycle: _l, ...shared } = options;
  const lifecycle = options.lifecycle ?? handle?.lifecycle;
  return new Observable<CallAnalysis<C>>((subscriber) => {
    const stats = callStats ?? createAnalyzeCallsStats();
    handle?.reportStats('analyzeCalls', stats);
    // Across workers the primary holds the count, and says whether a call that may not wait gets a slot.
    const slots = handle ? workerSlots(handle, max, whenFull === 'queue') : localSlots(max);
    const runs = new Set<CallRun<C>>();
    const tally = new CallTally(stats, runs);
    const ctx: CallRunContext = { slots, max, whenFull, maxQueueMs, drainRejected: drainRejected !== false, scheduler, stats, publish, onEvent: tally.event, onEnded: tally.ended };
    let open = 0;
    let sourceDone = false;
    let draining = false;
    let index = 0;
    const maybeComplete = (): void => {
      if (sourceDone && open === 0) subscriber.complete();
    };
    const attached = lifecycle?.attach({
      get inFlight() {
        return open;
      },
      stopAccepting: () => {
        draining = true;
      },
      endCalls: (error) => {
        for (const r of [...runs]) r.shutdown(error);
      },
      get unready() {
        return whenFull === 'reject' && slots.full() ? `every one of ${max} sessions runs (whenFull: 'reject')` : undefined;
      },
      metrics: () => tally.metrics(),
    });

    const onCall = (call: C): void => {
      const i = index++;
      stats.calls++;
      const perCall = sessionOptions?.(call, i) ?? {};
      const run = new CallRun(call, ctx, { ...shared, ...perCall, ...(call.format && !perCall.format && !shared.format ? { format: call.format } : {}) });
      // Across workers, the primary hears of the call before anyone else does, so it can end
      // the call (worker_exited) if this process dies at any moment after.
      handle?.callStarted(call.id, {});
      if (draining || (whenFull === 'reject' && slots.full())) {
        subscriber.next(run.analysis);
        const o = run.reject(draining ? new SessionError('shutdown', `call ${call.id} refused: the service is draining (it takes no new call)`) : undefined);
        handle?.callEnded(call.id, o.status, o.error);
        return;
      }
      // The driver subscribes first, so the call is emitted already running (or queued).
      open++;
      runs.add(run);
      let emitted = false;
      run.drive((o) => {
        handle?.callEnded(call.id, o.status, o.error);
        runs.delete(run);
        open--;
        attached?.changed();
        if (emitted) maybeComplete();
      });
      emitted = true;
      if (callStartChannel.hasSubscribers && run.analysis.status !== 'rejected') callStartChannel.publish({ id: call.id, status: run.analysis.status });
      subscriber.next(run.analysis);
      maybeComplete();
    };

    // A throw from onCall (a user's sessionOptions, say) errors the stream and stops the calls.
    const source = calls$.subscribe(
      operatorSubscriber<C>(subscriber, {
        next: onCall,
        complete: () => {
          sourceDone = true;
          maybeComplete();
        },
      }),
    );
    return () => {
      source.unsubscribe();
      for (const r of [...runs]) r.stop();
      runs.clear();
      open = 0;
      attached?.detach();
    };
  });
}
