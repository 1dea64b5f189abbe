// The life cycle of a service that takes calls, and the seam every call server plugs into:
// the servers say what is in flight and refuse new calls their own way; this says when to.
import { BehaviorSubject, asyncScheduler, type Observable, type SchedulerLike, type Subscription } from 'rxjs';
import { SvcError } from '../errors/index.js';
import { publishServiceState } from './channels.js';
import type { ServiceMetric } from './metric.js';
import { INITIAL_SERVICE_STATE, serviceReducer, type ServiceEvent, type ServiceState } from './serviceState.js';

/** How long a drain waits for the calls in flight by default before it ends them `shutdown`, ms. */
export const DEFAULT_DRAIN_TIMEOUT_MS = 30_000;

/**
 * What a call server gives a {@link ServiceLifecycle}: the one seam every server plugs into
 * (`rtpSource`, `mediaStreamServer` and `analyzeCalls` here; a SIP or AudioHook server the same
 * way). A server attaches itself with {@link ServiceLifecycle.attach} when it starts (its
 * `lifecycle` option) and calls the handle's `changed()` whenever `inFlight` drops.
 *
 * - `inFlight`: what it has accepted and not yet ended, now (calls, legs, connections). The
 *   service stops once every attached server is at 0 while draining.
 * - `stopAccepting()`: the service drains. From now on a new call is refused the server's own
 *   way, and counted by the server: an RTP source drops a new SSRC's packets (counted, told
 *   once); a media-stream server answers the upgrade HTTP 503 with `Retry-After`; a SIP server
 *   answers an INVITE 503 with `Retry-After`. Calls in flight go on. Called once.
 * - `endCalls(error)`: the drain deadline passed, or a second signal came: end everything in
 *   flight now. A call still ends with an outcome, failed with `error` (a `SvcError` of code
 *   `shutdown`) and its audio accounted; the server releases what it holds (a media stream
 *   closes its connections with 1001, SIP sends BYE). Called at most once, after `stopAccepting`.
 * - `unready` (optional): why it cannot take a call now though the service is `ready` (every
 *   slot taken under `whenFull: 'reject'`, Redis down); `/readyz` is false while any server has one.
 * - `metrics()` (optional): its counters, read at each scrape (see {@link ServiceMetric}): the
 *   figures come from the server's own state, never recounted elsewhere.
 */
export interface CallServer {
  /** What it has accepted and not yet ended, now. */
  readonly inFlight: number;
  /** The service drains: refuse new calls the server's own way, let those in flight go on. Called once. */
  stopAccepting(): void;
  /** End everything in flight now, each call failed with `error` (code `shutdown`), its audio accounted. Called at most once. */
  endCalls(error: SvcError): void;
  /** Why it cannot take a call now though the service is `ready`. */
  readonly unready?: string | undefined;
  /** Its counters, read at each scrape. */
  metrics?(): readonly ServiceMetric[];
}

/** What {@link ServiceLifecycle.attach} gives back to a server. */
export interface CallServerHandle {
  /** Tell the life cycle that `inFlight` (or `unready`) changed: a drain may be complete. */
  changed(): void;
  /** The server stopped: it no longer counts (its metrics go with it). */
  detach(): void;
}

/** Options of {@link ServiceLifecycle}. */
export interface ServiceLifecycleOptions {
  /** How long {@link ServiceLifecycle.drain} waits by default before it ends the calls in flight, ms (default 30 000; `Infinity`: no deadline). */
  readonly drainTimeoutMs?: number | undefined;
  /** Where the deadline's timer and the clock come from (default `asyncScheduler`). */
  readonly scheduler?: SchedulerLike | undefined;
}

/** Whether a service takes new calls now, and if not, why. */
export interface Readiness {
  readonly ready: boolean;
  /** `starting`, `draining`, `stopped`, or a server's `unready` reason. */
  readonly reason: string | undefined;
}

/**
 * The life cycle of a service that takes calls: `starting → ready → draining → stopped`
 * ({@link ServiceState}), moved by the process's signals and reported by `/readyz`.
 *
 * - `ready()` once every server listens.
 * - `drain(reason)` (SIGTERM, a first SIGINT, `--exit-after`): every attached server stops
 *   accepting; the calls in flight run to their end until the deadline (`drainTimeoutMs`,
 *   30 s by default), then are ended typed `shutdown`. `stopped` once nothing is in flight.
 * - `force(reason)` (a second signal): end the calls in flight now, typed `shutdown`.
 * - `state$` is hot: the current state at once, then each change; it never errors or completes.
 *   Each change is also published on the `svc-stream:service` diagnostics channel.
 *
 * ## Example
 * ```ts
 * import { analyzeCalls, rtpSource, ServiceLifecycle } from 'svc-stream/telephony';
 *
 * const lifecycle = new ServiceLifecycle({ drainTimeoutMs: 30_000 });
 * analyzeCalls(rtpSource({ port: 5004, lifecycle, onListening: () => lifecycle.ready() }), { lifecycle }).subscribe((call) =>
 *   call.outcome$.subscribe((o) => console.log(call.id, o.status)),
 * );
 * process.once('SIGTERM', () => {
 *   lifecycle.drain('signal');
 *   process.once('SIGTERM', () => lifecycle.force('signal'));
 * });
 * lifecycle.state$.subscribe((s) => s.status === 'stopped' && process.exit(s.forced ? 1 : 0));
 * ```
 */
export class ServiceLifecycle {
  private readonly subject = new BehaviorSubject<ServiceState>(INITIAL_SERVICE_STATE);
  private readonly servers = new Set<CallServer>();
  private readonly scheduler: SchedulerLike;
  private readonly drainTimeoutMs: number;
  private deadline: Subscription | undefined;
  private ended = false;
  /** Hot: the current state at once, then each change; never errors, never completes. */
  readonly state$: Observable<ServiceState> = this.subject.asObservable();

  constructor(options: ServiceLifecycleOptions = {}) {
    this.scheduler = options.scheduler ?? asyncScheduler;
    this.drainTimeoutMs = options.drainTimeoutMs ?? DEFAULT_DRAIN_TIMEOUT_MS;
    if (!(this.drainTimeoutMs >= 0)) throw new SvcError('invalid_argument', `ServiceLifecycle: drainTimeoutMs must be 0 or more, got ${this.drainTimeoutMs}`);
  }

  /** The state now. */
  get state(): ServiceState {
    return this.subject.value;
  }

  /** Whether a new call is taken now: `ready`, and no server full or missing a dependency. */
  get readiness(): Readiness {
    const status = this.state.status;
    if (status !== 'ready') return { ready: false, reason: status };
    for (const s of this.servers) if (s.unready !== undefined) return { ready: false, reason: s.unready };
    return { ready: true, reason: undefined };
  }

  /** Whether nothing is in flight in any server. */
  get idle(): boolean {
    for (const s of this.servers) if (s.inFlight > 0) return false;
    return true;
  }

  /** The servers attached now (their metrics are the service's). */
  get attached(): readonly CallServer[] {
    return [...this.servers];
  }

  /** Plug a server in. Draining already: it is told to stop accepting at once. */
  attach(server: CallServer): CallServerHandle {
    this.servers.add(server);
    const s = this.state;
    if (s.status === 'draining' || s.status === 'stopped') server.stopAccepting();
    if (s.status === 'draining' && s.forced) server.endCalls(this.shutdownError(s.reason));
    return {
      changed: () => this.check(),
      detach: () => {
        this.servers.delete(server);
        this.check();
      },
    };
  }

  /** Every server listens: `starting` → `ready`. */
  ready(): void {
    this.dispatch({ type: 'listening' });
  }

  /**
   * Stop taking calls; end those in flight after `timeoutMs` (default the `drainTimeoutMs`
   * option; `Infinity`: wait for them). A second drain may only bring the deadline closer.
   */
  drain(reason = 'signal', timeoutMs = this.drainTimeoutMs): void {
    const before = this.state;
    const deadline = Number.isFinite(timeoutMs) ? this.scheduler.now() + timeoutMs : undefined;
    const after = this.dispatch({ type: 'drain', reason, deadline });
    if (after === before || after.status !== 'draining') return;
    if (before.status !== 'draining') for (const s of [...this.servers]) s.stopAccepting();
    if (deadline !== undefined && after.deadline === deadline) {
      this.deadline?.unsubscribe();
      this.deadline = this.scheduler.schedule(() => this.force('drain-timeout'), Math.max(0, timeoutMs));
    }
    this.check();
  }

  /** End the calls in flight now, typed `shutdown` (a second signal; the drain deadline). */
  force(reason = 'signal'): void {
    const before = this.state;
    const after = this.dispatch({ type: 'force', reason });
    if (after === before || after.status !== 'draining') return;
    this.deadline?.unsubscribe();
    this.deadline = undefined;
    const servers = [...this.servers];
    if (before.status !== 'draining') for (const s of servers) s.stopAccepting();
    const error = this.shutdownError(reason);
    for (const s of servers) s.endCalls(error);
    this.check();
  }

  /** Resolves with the `stopped` state. */
  whenStopped(): Promise<ServiceState> {
    return new Promise((resolve) => {
      const sub = this.state$.subscribe((s) => {
        if (s.status !== 'stopped') return;
        resolve(s);
        queueMicrotask(() => sub.unsubscribe());
      });
    });
  }

  private shutdownError(reason: string): SvcError {
    const why = reason === 'drain-timeout' ? 'the drain deadline passed' : `the service was stopped (${reason})`;
    return new SvcError('shutdown', `ended before its end: ${why}`);
  }

  private check(): void {
    if (this.state.status === 'draining' && this.idle) {
      this.deadline?.unsubscribe();
      this.deadline = undefined;
      this.dispatch({ type: 'idle' });
    }
  }

  private dispatch(event: ServiceEvent): ServiceState {
    if (this.ended) return this.state;
    const next = serviceReducer(this.state, event);
    if (next === this.state) return next;
    if (next.status === 'stopped') this.ended = true;
    publishServiceState(next);
    this.subject.next(next);
    return next;
  }
}
