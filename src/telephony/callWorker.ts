// One worker's side of `callWorkers`: what the sources and analyzeCalls of a worker process ask
// the primary (a place under a bound shared by every worker, a session slot) and tell it (calls
// started and ended, counters), over node:cluster's IPC channel.
import { SessionError, SvcError } from '../errors/index.js';
import type { ConcurrencyLimiter, LimiterLease } from '../concurrency/limiter.js';

/** The bounds the workers share, held by the primary. */
export type SharedBound = 'connections' | 'legs';

/** What the sources and analyzeCalls of one worker process are given (the `worker` option). */
export interface CallWorker {
  /** This worker's place, 0 … `workers` − 1; a worker restarted after a crash takes the place of the one that died. */
  readonly index: number;
  /** How many workers share the calls. */
  readonly workers: number;
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
  | { readonly t: 'svcw:stats'; readonly name: string; readonly stats: Readonly<Record<string, number>> }
  | { readonly t: 'svcw:listening'; readonly port: number };

/** Messages from the primary. */
export type PrimaryMessage =
  | { readonly t: 'svcw:took'; readonly id: number; readonly ok: boolean }
  | { readonly t: 'svcw:granted'; readonly id: number; readonly ok: boolean }
  | { readonly t: 'svcw:room'; readonly bound: SharedBound; readonly full: boolean }
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
  /** Told when the primary asks the worker to stop taking calls. */
  onStop: (() => void) | undefined;

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
      case 'svcw:stop':
        this.onStop?.();
        return;
    }
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
    this.statsTimer ??= setInterval(() => this.flushStats(), STATS_EVERY_MS).unref();
  }

  /** The port a source of this worker listens on. */
  listening(port: number): void {
    this.send({ t: 'svcw:listening', port });
  }

  /** Send every counter now (a call ended; the worker is stopping). */
  flushStats(): void {
    for (const [name, stats] of this.reported) {
      const numbers: Record<string, number> = {};
      for (const [k, v] of Object.entries(stats)) if (typeof v === 'number') numbers[k] = v;
      this.send({ t: 'svcw:stats', name, stats: numbers });
    }
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
