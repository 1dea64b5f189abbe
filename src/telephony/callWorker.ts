// One worker's side of `callWorkers`: what the sources and analyzeCalls of a worker process ask
// the primary (a place under a bound shared by every worker, a session slot) and tell it (calls
// started and ended, counters), over node:cluster's IPC channel.
import { SessionError, SvcError } from '../errors/index.js';
import type { ConcurrencyLimiter, LimiterLease } from '../concurrency/limiter.js';
import { ServiceLifecycle } from '../service/lifecycle.js';
import type { MetricsJson, ServiceRegistry } from '../service/metric.js';
import type { OpsAnswer, OpsPath } from '../service/opsHttp.js';

/** The bounds the workers share, held by the primary. */
export type SharedBound = 'connections' | 'legs';

/** What the sources and analyzeCalls of one worker process are given (the `worker` option). */
export interface CallWorker {
  /** This worker's place, 0 … `workers` − 1; a worker restarted after a crash takes the place of the one that died. */
  readonly index: number;
  /** How many workers share the calls. */
  readonly workers: number;
  /**
   * The worker's life cycle, driven by the primary's: the sources and analyzeCalls given this
   * worker attach to it, so when the primary drains every worker stops taking calls, and when it
   * forces, the calls in flight end `shutdown`. Ready once the worker's source listens.
   */
  readonly lifecycle: ServiceLifecycle;
  /** Hand a warning to the primary, which says it once for every worker by `code` (a `warning` event). */
  warn(code: string, line: string): void;
}

/** Messages between a worker and the primary (one IPC channel, every type prefixed). */
export type WorkerMessage =
  | { readonly t: 'svcw:take'; readonly id: number; readonly bound: SharedBound; readonly limit: number }
  | { readonly t: 'svcw:give'; readonly bound: SharedBound }
  | { readonly t: 'svcw:acquire'; readonly id: number; readonly limit: number; readonly wait: boolean }
  | { readonly t: 'svcw:withdraw'; readonly id: number }
  | { readonly t: 'svcw:release'; readonly id: number }
  | { readonly t: 'svcw:call'; readonly id: string; readonly info: Readonly<Record<string, unknown>> }
  | { readonly t: 'svcw:call-end'; readonly id: string; readonly status: string; readonly error?: { readonly code: string; readonly message: string } | undefined }
  /**
   * Every counter under its name (rtpSource, mediaStreamServer, analyzeCalls), and the highest
   * sequence number of each numbered call as far as those counters count: one message, so a
   * worker killed at any moment leaves a report whose parts agree.
   */
  | { readonly t: 'svcw:stats'; readonly stats: Readonly<Record<string, Readonly<Record<string, number>>>>; readonly seqs?: readonly (readonly [string, number])[] | undefined }
  | { readonly t: 'svcw:listening'; readonly port: number }
  /** The worker's registry (prom-client JSON): each second, at its end, and answering `svcw:metrics-req` `id`. */
  | { readonly t: 'svcw:metrics'; readonly id?: number | undefined; readonly json: MetricsJson }
  /** An operator's request that reached this worker (a shared port): the primary answers it. */
  | { readonly t: 'svcw:scrape'; readonly id: number; readonly path: OpsPath }
  /** A warning for the whole service, said once by the primary whichever worker saw it. */
  | { readonly t: 'svcw:warn'; readonly code: string; readonly line: string }
  /** Call `id`'s packets are numbered (RTP): its first sequence number (16 bits). */
  | { readonly t: 'svcw:mark'; readonly id: string; readonly first: number; readonly seq: number };

/** Messages from the primary. */
export type PrimaryMessage =
  | { readonly t: 'svcw:took'; readonly id: number; readonly ok: boolean }
  | { readonly t: 'svcw:granted'; readonly id: number; readonly ok: boolean }
  | { readonly t: 'svcw:room'; readonly bound: SharedBound; readonly full: boolean }
  /** Stop taking calls; those in flight run on (the primary keeps the deadline). */
  | { readonly t: 'svcw:drain'; readonly reason: string }
  /** End the calls in flight now, typed `shutdown`. */
  | { readonly t: 'svcw:force'; readonly reason: string }
  /** The primary serves metrics: report the worker's registry each second from now on. */
  | { readonly t: 'svcw:metrics-on' }
  | { readonly t: 'svcw:metrics-req'; readonly id: number }
  | { readonly t: 'svcw:scraped'; readonly id: number; readonly answer: OpsAnswer }
  | { readonly t: 'svcw:stop' };

/** The refusals of shared session slots (a call that may not wait found none free). */
const refusals = new WeakSet<object>();

/** Whether `err` is a refusal by the slots the workers share (not the service's own `concurrency_limit`). */
export function isSlotRefusal(err: unknown): boolean {
  return typeof err === 'object' && err !== null && refusals.has(err);
}

/** How often a worker sends its counters to the primary, ms. */
const STATS_EVERY_MS = 1000;

/**
 * The families the primary counts itself: it hears of every call's start and end at once (and
 * ends a dead worker's calls), so a worker's own count of them would count twice.
 */
export const PRIMARY_COUNTED = ['svc_stream_calls_started_total', 'svc_stream_calls_ended_total'] as const;

/**
 * The worker's handle: the one object its sources and analyzeCalls share. Made by
 * `callWorkers` in a worker process; not constructed by users.
 */
export class WorkerHandle implements CallWorker {
  private nextId = 0;
  private readonly pending = new Map<number, (ok: boolean) => void>();
  /** What the primary last said about each bound: full, so a new call is refused here without asking. */
  private readonly fullNow = new Set<SharedBound>();
  private readonly reported = new Map<string, Record<string, number>>();
  /** Calls the primary was told of and not yet of their end (each is told once, whoever tells). */
  private readonly open = new Set<string>();
  private statsTimer: NodeJS.Timeout | undefined;
  /** Told when the primary asks the worker to stop at once. */
  onStop: (() => void) | undefined;
  /** The worker's life cycle: the primary's deadline governs it, so its own drain has none. */
  readonly lifecycle = new ServiceLifecycle({ drainTimeoutMs: Infinity });
  /** The worker's registry, made when the primary first wants metrics (prom-client loads only then). */
  private registry: Promise<ServiceRegistry | undefined> | undefined;
  private readonly scrapes = new Map<number, (answer: OpsAnswer) => void>();
  /** The numbered calls open here: how far each has come (its highest sequence number now). */
  private readonly marks = new Map<string, () => number>();

  constructor(
    readonly index: number,
    readonly workers: number,
    private readonly send: (message: WorkerMessage) => void,
  ) {}

  /** A message from the primary. */
  receive(message: PrimaryMessage): void {
    switch (message.t) {
      case 'svcw:took':
      case 'svcw:granted': {
        const resolve = this.pending.get(message.id);
        this.pending.delete(message.id);
        resolve?.(message.ok);
        return;
      }
      case 'svcw:room':
        if (message.full) this.fullNow.add(message.bound);
        else this.fullNow.delete(message.bound);
        return;
      case 'svcw:drain':
        this.lifecycle.drain(message.reason, Infinity);
        return;
      case 'svcw:force':
        this.lifecycle.force(message.reason);
        return;
      case 'svcw:metrics-on':
        this.registry ??= import('../service/metrics.js')
          .then((m) => m.createServiceRegistry(this.lifecycle, { serviceState: false, exclude: PRIMARY_COUNTED }))
          .catch(() => undefined);
        this.sendMetrics();
        this.statsTimer ??= setInterval(() => this.tick(), STATS_EVERY_MS).unref();
        return;
      case 'svcw:metrics-req':
        this.sendMetrics(message.id);
        return;
      case 'svcw:scraped': {
        const resolve = this.scrapes.get(message.id);
        this.scrapes.delete(message.id);
        resolve?.(message.answer);
        return;
      }
      case 'svcw:stop':
        this.onStop?.();
        return;
    }
  }

  /** Send the worker's registry to the primary (answering request `id`, or its report of each second). */
  private sendMetrics(id?: number): Promise<void> {
    if (this.registry === undefined) return Promise.resolve();
    return this.registry
      .then((r) => r?.json())
      .then(
        (json) => this.send({ t: 'svcw:metrics', ...(id !== undefined ? { id } : {}), json: json ?? [] }),
        () => this.send({ t: 'svcw:metrics', ...(id !== undefined ? { id } : {}), json: [] }),
      );
  }

  /** An operator's request that reached this worker: the primary's answer (for every worker). */
  scrape(path: OpsPath): Promise<OpsAnswer> {
    const id = this.nextId++;
    return new Promise((resolve) => {
      this.scrapes.set(id, resolve);
      this.send({ t: 'svcw:scrape', id, path });
    });
  }

  /**
   * Call `id`'s packets carry sequence numbers (an RTP leg): tell the primary where they start,
   * how far the counters it was last sent reach (`highest()` now: call it once every datagram
   * counted so far is in the leg), and with each report how far they have come (16 bits). If this worker dies and
   * the call goes on as a new leg on the restarted worker, the primary counts the numbers between
   * as lost with the worker (`CallWorkersStats.packetsLostWithWorker`).
   */
  markCall(id: string, first: number, highest: () => number): void {
    this.marks.set(id, highest);
    // The counters first, in the same tick: the datagrams the leg held while it waited for its
    // place were counted here but not yet sent, and a mark ahead of the counters the primary
    // holds would leave them counted nowhere if this worker died before its next report.
    this.flushStats();
    this.send({ t: 'svcw:mark', id, first: first & 0xffff, seq: highest() & 0xffff });
  }

  /** A warning the primary says once for every worker (by `code`): one process family, one warning. */
  warn(code: string, line: string): void {
    this.send({ t: 'svcw:warn', code, line });
  }

  /** The last report, before the worker ends: its counters and its registry. */
  async finalReport(): Promise<void> {
    this.flushStats();
    await this.sendMetrics();
  }

  /** Whether the primary said `bound` is full (a new call refused at once; the primary says when room frees). */
  isFull(bound: SharedBound): boolean {
    return this.fullNow.has(bound);
  }

  /** Take a place under `bound` (`limit` across every worker): true when taken, false when full. */
  take(bound: SharedBound, limit: number): Promise<boolean> {
    if (this.fullNow.has(bound)) return Promise.resolve(false);
    const id = this.nextId++;
    return new Promise((resolve) => {
      this.pending.set(id, resolve);
      this.send({ t: 'svcw:take', id, bound, limit });
    });
  }

  /** Give back a place taken under `bound`. */
  give(bound: SharedBound): void {
    this.send({ t: 'svcw:give', bound });
  }

  /**
   * Session slots shared by every worker, `limit` at once, first come first served across
   * them: the limiter analyzeCalls runs each call's session under. With `wait` false a call
   * that finds no free slot is refused at once (`whenFull: 'reject'`).
   */
  slots(limit: number, wait: boolean): ConcurrencyLimiter {
    return {
      acquire: (signal?: AbortSignal) =>
        new Promise<LimiterLease>((resolve, reject) => {
          const refused = (): SvcError => {
            const err = new SessionError('concurrency_limit', `refused: every one of ${limit} sessions across ${this.workers} workers runs (whenFull: 'reject')`);
            refusals.add(err);
            return err;
          };
          if (signal?.aborted) return reject(new SvcError('aborted', 'waiting for a session slot was aborted', { cause: signal.reason }));
          const id = this.nextId++;
          const onAbort = (): void => {
            this.pending.delete(id);
            this.send({ t: 'svcw:withdraw', id });
            reject(new SvcError('aborted', 'waiting for a session slot was aborted', { cause: signal?.reason }));
          };
          signal?.addEventListener('abort', onAbort, { once: true });
          this.pending.set(id, (ok) => {
            signal?.removeEventListener('abort', onAbort);
            if (!ok) return reject(refused());
            let released = false;
            resolve({
              release: () => {
                if (released) return;
                released = true;
                this.send({ t: 'svcw:release', id });
              },
            });
          });
          this.send({ t: 'svcw:acquire', id, limit, wait });
        }),
    };
  }

  /** A call started here (the primary keeps it until it ends, to end it if this worker dies). */
  callStarted(id: string, info: Readonly<Record<string, unknown>>): void {
    if (this.open.has(id)) return;
    this.open.add(id);
    // The counters first (the source counted the new leg or connection), then the call.
    this.flushStats();
    this.send({ t: 'svcw:call', id, info });
  }

  /** A call ended here, with its outcome. */
  callEnded(id: string, status: string, error?: unknown): void {
    if (!this.open.delete(id)) return;
    this.marks.delete(id);
    // The counters first, so the primary's totals include this call when it hears of its end.
    this.flushStats();
    const e = error as { code?: unknown; message?: unknown } | undefined;
    this.send({
      t: 'svcw:call-end',
      id,
      status,
      ...(error !== undefined ? { error: { code: typeof e?.code === 'string' ? e.code : 'error', message: typeof e?.message === 'string' ? e.message : String(error) } } : {}),
    });
  }

  /** Counters under `name` the primary adds up over the workers (sent each second, and now). */
  reportStats(name: string, stats: object): void {
    this.reported.set(name, stats as Record<string, number>);
    this.flushStats();
    this.statsTimer ??= setInterval(() => this.tick(), STATS_EVERY_MS).unref();
  }

  /** The port a source of this worker listens on: the worker is ready. */
  listening(port: number): void {
    this.lifecycle.ready();
    this.send({ t: 'svcw:listening', port });
  }

  /** Each second: the counters, and the registry when the primary wants it. */
  private tick(): void {
    this.flushStats();
    if (this.registry !== undefined) void this.sendMetrics();
  }

  /** Send every counter now (a call ended; the worker is stopping). */
  flushStats(): void {
    const all: Record<string, Record<string, number>> = {};
    for (const [name, stats] of this.reported) {
      const numbers: Record<string, number> = {};
      for (const [k, v] of Object.entries(stats)) if (typeof v === 'number') numbers[k] = v;
      all[name] = numbers;
    }
    // Read in the same tick as the counters: what they count, these numbers reach.
    const seqs = this.marks.size > 0 ? [...this.marks].map(([id, highest]) => [id, highest()] as const) : undefined;
    this.send({ t: 'svcw:stats', stats: all, ...(seqs ? { seqs } : {}) });
  }


  /** Stop sending counters. */
  close(): void {
    clearInterval(this.statsTimer);
    this.flushStats();
  }
}

/** The handle behind a `worker` option, or undefined when the option is not one of ours. */
export function workerHandle(worker: CallWorker | undefined): WorkerHandle | undefined {
  return worker instanceof WorkerHandle ? worker : undefined;
}
