// One call under analyzeCalls: its session run under a slot (queued, running, or refused), its
// status and how long it waited, its outcome, and the streams that never error.
import { AsyncSubject, catchError, defer, EMPTY, Observable, timer, type SchedulerLike, type Subscription } from 'rxjs';
import { SessionError, SvcError } from '../errors/index.js';
import type { ServerEvent, ServerEventType } from '../schema/events.js';
import { conversationSession, type ConversationOptions } from '../session/conversation.js';
import { accountOf, createSessionStats, type SessionStats } from '../session/stats.js';
import { splitSession, type SessionStreams } from '../state/splitSession.js';
import { initialConversationSnapshot, type ConversationSnapshot } from '../state/snapshot.js';
import type { AnalyzableCall, AnalyzeCallsStats, CallAnalysis, CallOutcome, CallStatus } from './callAnalysis.js';
import type { CallSlots } from './callSlots.js';
import { isSlotRefusal } from './callWorker.js';
import type { Publisher } from '../publishing.js';
import { sessionIdOf } from '../schema/sessionId.js';

/** What every call of one analyzeCalls subscription shares. */
export interface CallRunContext {
  readonly slots: CallSlots;
  readonly max: number;
  readonly whenFull: 'queue' | 'reject';
  readonly maxQueueMs: number;
  readonly drainRejected: boolean;
  readonly scheduler: SchedulerLike;
  readonly stats: AnalyzeCallsStats;
  /** Where each call's session is published (analyzeCalls' `publish`), if anywhere. */
  readonly publish?: Publisher | undefined;
  /** Told of each server event of every call (its type), for the counters by type. */
  readonly onEvent?: ((type: ServerEventType) => void) | undefined;
  /** Told of each call's end, with its session's counters, before `ended`. */
  readonly onEnded?: ((outcome: CallOutcome, session: SessionStats, id: string) => void) | undefined;
}

/** The session of one call, its analysis, and the driver that keeps it going. */
export class CallRun<C extends AnalyzableCall> {
  readonly analysis: CallAnalysis<C>;
  private status: CallStatus = 'queued';
  private last: ConversationSnapshot = initialConversationSnapshot;
  private readonly arrivedAt: number;
  private startedAt: number | undefined;
  private refusedAt: number | undefined;
  /** Refused after waiting `maxQueueMs`: its failure is a rejection. */
  private timedOut = false;
  private readonly outcome = new AsyncSubject<CallOutcome>();
  private driver: Subscription | undefined;
  private counting: Subscription | undefined;
  private ended: ((outcome: CallOutcome) => void) | undefined;

  constructor(
    readonly call: C,
    private readonly ctx: CallRunContext,
    sessionOptions: ConversationOptions,
  ) {
    this.arrivedAt = ctx.scheduler.now();
    const stats = createSessionStats();
    const split = splitSession(this.session(sessionOptions, stats));
    const run = this;
    this.analysis = {
      call,
      id: call.id,
      streams: failureAsCompletion(split),
      stats,
      get status() {
        return run.status;
      },
      get queuedMs() {
        const now = run.ctx.scheduler.now();
        return (run.startedAt ?? run.refusedAt ?? (run.status === 'queued' ? now : run.arrivedAt)) - run.arrivedAt;
      },
      outcome$: this.outcome.asObservable(),
    };
    this.split = split;
  }

  private readonly split: SessionStreams;

  /**
   * Start driving the session (and so take or wait for a slot); `ended` is told once with the
   * outcome. A session can end synchronously (an invalid config), before this returns.
   */
  drive(ended: (outcome: CallOutcome) => void): void {
    this.ended = ended;
    const onEvent = this.ctx.onEvent;
    if (onEvent !== undefined) this.counting = this.split.events$.subscribe({ next: (e) => onEvent(e.type), error: () => undefined });
    const driver = this.split.snapshot$.subscribe({
      next: (s) => (this.last = s),
      error: (error: unknown) => {
        // Refused by the slots every worker shares (whenFull: 'reject'): a rejection, as in one process.
        if (isSlotRefusal(error)) {
          this.drain();
          return this.finish({ status: 'rejected', error, snapshot: this.last });
        }
        this.finish({ status: 'error', error, snapshot: this.last });
      },
      complete: () => this.finish({ status: 'done', snapshot: this.last }),
    });
    if (!driver.closed && this.ended !== undefined) this.driver = driver;
  }

  /**
   * End the call now, failed with a `shutdown` error carrying its audio account (the service's
   * drain deadline passed, or a second signal came). Nothing once it has ended.
   */
  shutdown(reason: SvcError): void {
    if (this.ended === undefined) return;
    this.driver?.unsubscribe();
    this.driver = undefined;
    const error = new SvcError('shutdown', `call ${this.call.id} ${reason.message}`, { audio: accountOf(this.analysis.stats), cause: reason });
    this.finish({ status: 'error', error, snapshot: this.last });
  }

  private finish(o: CallOutcome): void {
    const ended = this.ended;
    if (ended === undefined) return;
    this.ended = undefined;
    this.driver = undefined;
    this.counting?.unsubscribe();
    this.counting = undefined;
    if (this.timedOut) o = { ...o, status: 'rejected' };
    this.status = o.status;
    const s = this.ctx.stats;
    if (o.status === 'done') s.done++;
    else if (o.status === 'rejected') {
      s.rejected++;
      s.queueTimeouts += this.timedOut ? 1 : 0;
    } else if ((o.error as { code?: unknown } | undefined)?.code === 'shutdown') s.shutdown++;
    else s.failed++;
    this.ctx.onEnded?.(o, this.analysis.stats, this.call.id);
    this.outcome.next(o);
    this.outcome.complete();
    ended(o);
  }

  /** Refuse the call at once: `whenFull: 'reject'` with every slot taken here, or (`error` given) the service drains. */
  reject(error: SvcError = new SessionError('concurrency_limit', `call ${this.call.id} refused: ${this.ctx.max} sessions already run (whenFull: 'reject')`)): CallOutcome {
    this.status = 'rejected';
    this.ctx.stats.rejected++;
    const o: CallOutcome = { status: 'rejected', error, snapshot: this.last };
    this.ctx.onEnded?.(o, this.analysis.stats, this.call.id);
    this.outcome.next(o);
    this.outcome.complete();
    this.drain();
    return o;
  }

  /** Close the session (the analyzeCalls subscription ended). */
  stop(): void {
    this.ended = undefined;
    this.driver?.unsubscribe();
    this.driver = undefined;
    this.counting?.unsubscribe();
    this.counting = undefined;
  }

  /** Read a refused call's live audio to its end, so the source does not keep it. */
  private drain(): void {
    if (this.ctx.drainRejected) this.call.audio$.subscribe({ error: () => undefined });
  }

  /** The call's session, under a slot: queued (for at most `maxQueueMs`), then running. */
  private session(options: ConversationOptions, stats: ReturnType<typeof createSessionStats>): Observable<ServerEvent> {
    const { ctx, call } = this;
    const sessionOptions: ConversationOptions = { ...options, stats };
    return new Observable<ServerEvent>((sub) => {
      let queued = true;
      ctx.stats.queued++;
      const running = defer(() => {
        queued = false;
        ctx.stats.queued--;
        this.startedAt = ctx.scheduler.now();
        ctx.stats.peakQueuedMs = Math.max(ctx.stats.peakQueuedMs, this.startedAt - this.arrivedAt);
        ctx.stats.running++;
        ctx.stats.peakRunning = Math.max(ctx.stats.peakRunning, ctx.stats.running);
        this.status = 'running';
        const session$ = conversationSession(call.audio$, sessionOptions);
        return ctx.publish ? ctx.publish.publish(session$, { id: sessionIdOf(call.id), title: call.title ?? call.id, state$: stats.state$ }) : session$;
      });
      let held = false;
      const inner = ctx.slots.run(
        new Observable<ServerEvent>((s) => {
          held = true;
          const session = running.subscribe(s);
          return () => {
            session.unsubscribe();
            if (held) {
              held = false;
              ctx.stats.running--;
            }
          };
        }),
      );
      // A subscription of its own (not `sub`), so that giving up the wait leaves `sub` open for the refusal.
      const subscription = inner.subscribe({ next: (e) => sub.next(e), error: (err: unknown) => sub.error(err), complete: () => sub.complete() });
      // A live call's audio is stale after `maxQueueMs` of waiting: refuse it then.
      const waitLimit =
        queued && Number.isFinite(ctx.maxQueueMs)
          ? timer(ctx.maxQueueMs, ctx.scheduler).subscribe(() => {
              if (!queued) return;
              this.timedOut = true;
              this.refusedAt = ctx.scheduler.now();
              subscription.unsubscribe();
              this.drain();
              sub.error(
                new SessionError('concurrency_limit', `call ${call.id} refused: it waited ${ctx.maxQueueMs} ms for one of ${ctx.max} sessions (maxQueueMs); its live audio would be analysed late`),
              );
            })
          : undefined;
      return () => {
        waitLimit?.unsubscribe();
        subscription.unsubscribe();
        if (queued) {
          queued = false;
          ctx.stats.queued--;
        }
      };
    });
  }
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
