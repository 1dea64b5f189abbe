// One conversation-analysis session per incoming call, under a concurrency bound that either
// queues or rejects calls beyond it; a call's failure is its own and never ends the others.
import { asyncScheduler, AsyncSubject, catchError, defer, EMPTY, Observable, timer, type Subscription } from 'rxjs';
import type { AudioChunk } from '../audio/meta.js';
import { InputError, SessionError } from '../errors.js';
import type { AudioFormat } from '../schema/audio.js';
import type { ServerEvent } from '../schema/events.js';
import { conversationSession, type ConversationOptions } from '../session/conversation.js';
import { createSessionStats, type SessionStats } from '../session/stats.js';
import { splitSession, type SessionStreams } from '../state/splitSession.js';
import { initialConversationSnapshot, type ConversationSnapshot } from '../state/snapshot.js';
import { operatorSubscriber } from '../internal/operate.js';
import type { Publisher } from '../fleet/publisher.js';
import { sessionIdOf } from '../relay/protocol.js';


/** Anything with an id and audio: a `CallLeg`, a `MediaStreamCall`, or your own. */
export interface AnalyzableCall {
  readonly id: string;
  readonly audio$: Observable<AudioChunk>;
  /** The audio's format, when `audio$` does not carry it. */
  readonly format?: AudioFormat | undefined;
}

/** How long a call waits for a session slot by default before it is refused: {@link AnalyzeCallsOptions.maxQueueMs}. */
export const DEFAULT_MAX_QUEUE_MS = 5_000;

/** Where one call is in {@link analyzeCalls}: waiting for a session slot, running, or ended (`done`, `error`, `rejected` when full). */
export type CallStatus = 'queued' | 'running' | 'done' | 'error' | 'rejected';

/** How a call ended. */
export interface CallOutcome {
  readonly status: 'done' | 'error' | 'rejected';
  /** The session's error (a SvcError), or the local rejection. */
  readonly error?: unknown | undefined;
  /** The conversation state when it ended. */
  readonly snapshot: ConversationSnapshot;
}

/** One call's analysis: its derived streams, counters and outcome. */
export interface CallAnalysis<C extends AnalyzableCall = AnalyzableCall> {
  readonly call: C;
  readonly id: string;
  /**
   * `splitSession` over the call's session: shared, replaying the current state to late
   * subscribers. These streams **never error**: when the call fails they keep their last state
   * and complete, and the failure is delivered as the call's outcome (`outcome$`), so a
   * subscription without an error callback cannot crash a process that bridges many calls.
   */
  readonly streams: SessionStreams;
  /** The session's live counters. */
  readonly stats: SessionStats;
  /** Where the call is now. */
  readonly status: CallStatus;
  /** How long the call waited for a session slot (so far, while `queued`), in ms: how stale its audio is when its session starts. */
  readonly queuedMs: number;
  /** Emits the outcome once, then completes (replayed to late subscribers). Never errors: a failure is an outcome with `status: 'error'`. */
  readonly outcome$: Observable<CallOutcome>;
}

/** Counters over all calls, updated in place. */
export interface AnalyzeCallsStats {
  calls: number;
  queued: number;
  running: number;
  peakRunning: number;
  done: number;
  failed: number;
  /** Calls refused: at arrival (`whenFull: 'reject'`) or after waiting `maxQueueMs` (also in `queueTimeouts`). */
  rejected: number;
  /** Calls refused because they waited `maxQueueMs` for a slot. */
  queueTimeouts: number;
  /** The longest wait for a slot of any call that got one, in ms. */
  peakQueuedMs: number;
}

/** Fresh {@link AnalyzeCallsStats}, every counter at zero; pass it as `stats` and read it while calls run. */
export function createAnalyzeCallsStats(): AnalyzeCallsStats {
  return { calls: 0, queued: 0, running: 0, peakRunning: 0, done: 0, failed: 0, rejected: 0, queueTimeouts: 0, peakQueuedMs: 0 };
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
   * Publish every call's session to Redis Streams under its call id (`createPublisher` of
   * 'svc-stream/fleet'), for relays and the supervisor's page anywhere in the fleet
   * (docs/fleet.md). Publishing never delays or fails a call.
   */
  readonly publish?: Publisher | undefined;
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
  const max = options.maxConcurrent ?? 3;
  if (!Number.isInteger(max) || max < 1) throw new InputError('invalid_argument', `maxConcurrent must be a positive integer, got ${max}`);
  const whenFull = options.whenFull ?? 'queue';
  const maxQueueMs = options.maxQueueMs ?? DEFAULT_MAX_QUEUE_MS;
  if (!(maxQueueMs >= 0)) throw new InputError('invalid_argument', `maxQueueMs must be 0 or more, got ${maxQueueMs}`);
  const scheduler = options.scheduler ?? asyncScheduler;
  const { maxConcurrent: _m, whenFull: _w, maxQueueMs: _q, sessionOptions, drainRejected, callStats, stats: _s, publish, ...shared } = options;
  return new Observable<CallAnalysis<C>>((subscriber) => {
    const stats = callStats ?? createAnalyzeCallsStats();
    const waiting: Array<() => void> = [];
    const drivers = new Set<Subscription>();
    let running = 0;
    let open = 0;
    let sourceDone = false;
    let index = 0;

    const maybeComplete = (): void => {
      if (sourceDone && open === 0) subscriber.complete();
    };
    const release = (): void => {
      running--;
      stats.running = running;
      const next = waiting.shift();
      if (next) next();
    };

    const onCall = (call: C): void => {
      const i = index++;
      stats.calls++;
      const sessionStats = createSessionStats();
      const outcome = new AsyncSubject<CallOutcome>();
      let status: CallStatus = 'queued';
      let last: ConversationSnapshot = initialConversationSnapshot;
      const arrivedAt = scheduler.now();
      let startedAt: number | undefined;
      let timedOut = false;
      let refusedAt: number | undefined;
      const perCall = sessionOptions?.(call, i) ?? {};
      const sessionOpts: ConversationOptions = { ...shared, ...perCall, stats: sessionStats, ...(call.format && !perCall.format && !shared.format ? { format: call.format } : {}) };

      const reject = whenFull === 'reject' && running >= max;
      // The slot is taken when the share subscribes, released when the session ends either way.
      const session$ = new Observable<ServerEvent>((sub) => {
        let inner: Subscription | undefined;
        let holding = false;
        let stopped = false;
        let queueTimer: Subscription | undefined;
        const start = (): void => {
          if (stopped) return;
          queueTimer?.unsubscribe();
          startedAt = scheduler.now();
          stats.peakQueuedMs = Math.max(stats.peakQueuedMs, startedAt - arrivedAt);
          holding = true;
          running++;
          stats.running = running;
          stats.peakRunning = Math.max(stats.peakRunning, running);
          if (status === 'queued' && stats.queued > 0) stats.queued--;
          status = 'running';
          inner = defer(() =>
            publish
              ? publish.publish(conversationSession(call.audio$, sessionOpts), { id: sessionIdOf(call.id), title: call.id, state$: sessionStats.state$ })
              : conversationSession(call.audio$, sessionOpts),
          ).subscribe(sub);
        };
        if (running < max) start();
        else {
          stats.queued++;
          waiting.push(start);
          if (Number.isFinite(maxQueueMs)) {
            queueTimer = timer(maxQueueMs, scheduler).subscribe(() => {
              const w = waiting.indexOf(start);
              if (w < 0) return;
              waiting.splice(w, 1);
              stats.queued--;
              timedOut = true;
              refusedAt = scheduler.now();
              stopped = true;
              if (drainRejected !== false) call.audio$.subscribe({ error: () => undefined });
              sub.error(
                new SessionError('concurrency_limit', `call ${call.id} refused: it waited ${maxQueueMs} ms for one of ${max} sessions (maxQueueMs); its live audio would be analysed late`),
              );
            });
          }
        }
        return () => {
          stopped = true;
          queueTimer?.unsubscribe();
          inner?.unsubscribe();
          const w = waiting.indexOf(start);
          if (w >= 0) {
            waiting.splice(w, 1);
            stats.queued--;
          }
          if (holding) {
            holding = false;
            release();
          }
        };
      });
      const split = splitSession(session$);
      const streams = failureAsCompletion(split);
      const analysis: CallAnalysis<C> = {
        call,
        id: call.id,
        streams,
        stats: sessionStats,
        get status() {
          return status;
        },
        get queuedMs() {
          return (startedAt ?? refusedAt ?? (status === 'queued' ? scheduler.now() : arrivedAt)) - arrivedAt;
        },
        outcome$: outcome.asObservable(),
      };

      if (reject) {
        status = 'rejected';
        stats.rejected++;
        const error = new SessionError('concurrency_limit', `call ${call.id} refused: ${max} sessions already run (whenFull: 'reject')`);
        subscriber.next(analysis);
        outcome.next({ status: 'rejected', error, snapshot: last });
        outcome.complete();
        if (drainRejected !== false) call.audio$.subscribe({ error: () => undefined });
        return;
      }

      // The driver subscribes first, so the call is emitted already running (or queued).
      open++;
      let emitted = false;
      const finish = (o: CallOutcome): void => {
        if (timedOut) o = { ...o, status: 'rejected' };
        status = o.status;
        if (o.status === 'done') stats.done++;
        else if (o.status === 'rejected') {
          stats.rejected++;
          stats.queueTimeouts++;
        } else stats.failed++;
        outcome.next(o);
        outcome.complete();
        open--;
        if (emitted) maybeComplete();
      };
      // A session can end synchronously (an invalid config), before `subscribe` returns.
      let driver: Subscription | undefined;
      driver = split.snapshot$.subscribe({
        next: (s) => (last = s),
        error: (error: unknown) => {
          if (driver) drivers.delete(driver);
          finish({ status: 'error', error, snapshot: last });
        },
        complete: () => {
          if (driver) drivers.delete(driver);
          finish({ status: 'done', snapshot: last });
        },
      });
      if (!driver.closed) drivers.add(driver);
      emitted = true;
      subscriber.next(analysis);
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
      for (const d of [...drivers]) d.unsubscribe();
      drivers.clear();
    };
  });
}

/**
 * The same streams, each completing where the session would error: a call's failure belongs
 * to its outcome, and one call must never raise an unhandled error in a process of many.
 */
function failureAsCompletion(streams: SessionStreams): SessionStreams {
  const out: Record<string, Observable<unknown>> = {};
  for (const [name, stream$] of Object.entries(streams) as [string, Observable<unknown>][]) out[name] = stream$.pipe(catchError(() => EMPTY));
  return out as unknown as SessionStreams;
}
