// The one shape every concurrency bound has: acquire a slot (waiting, abortable), get a lease
// back, release it once. The in-process Semaphore and the fleet's Redis limiter both fit it.
import { Observable } from 'rxjs';
import { SvcError } from '../errors/index.js';
import { operatorSubscriber } from '../internal/operate.js';

/** A held concurrency slot. */
export interface LimiterLease {
  /** Give the slot back. Idempotent; never throws. */
  release(): void;
  /**
   * Aborted (with an SvcError `lease_lost` as its reason) when the slot was lost while held:
   * a fleet limiter whose lease could not be refreshed before it expired. Absent when a lease
   * cannot be lost (in-process).
   */
  readonly lost?: AbortSignal | undefined;
}

/**
 * A source of concurrency slots for one organization and one model: `Semaphore` (one
 * process) or `RedisLimiter` (a fleet of processes sharing Redis).
 */
export interface ConcurrencyLimiter {
  /**
   * Wait for a slot, in arrival order, and resolve with its lease. Rejects with an SvcError:
   * `aborted` when `signal` aborts first, `slot_timeout` when the limiter's wait deadline
   * passes, `redis_unavailable` when a shared limiter cannot reach its store.
   */
  acquire(signal?: AbortSignal): Promise<LimiterLease>;
  /**
   * `acquire` in callback form, for a limiter that can grant without waiting for a promise
   * (the in-process `Semaphore`): `grant` is called with the lease as soon as a slot is free,
   * synchronously when one is free now (first come, first served, in the queue `acquire`
   * uses). Returns a function that withdraws a request not granted yet. Optional: with it,
   * {@link underLimiter} starts the work in the very tick its slot is granted.
   */
  request?(grant: (lease: LimiterLease) => void): () => void;
}

/** Which limit a slot counts against: the organization (via its key) on one service, for one model. */
export interface LimiterTarget {
  readonly model: string;
  readonly baseUrl: string;
  readonly apiKey: string;
}

/** Hands out the limiter for each organization and model: what the `limiter` options take. */
export interface LimiterSource {
  /** The limiter of one organization and model (one per `{ baseUrl, apiKey }` and model). */
  limiterFor(target: LimiterTarget): ConcurrencyLimiter;
}

/**
 * Run `work$` under a slot of `limiter`: the one way work runs under a concurrency slot, for
 * the in-process `Semaphore` (its `run` is this) and the fleet's Redis limiter alike.
 *
 * - Subscribes to `work$` once the slot is granted: in the tick it is granted when the limiter
 *   has `request` (synchronously, when a slot is free now), else when `acquire` resolves.
 * - Releases the slot when the work completes, errors or is unsubscribed; an unsubscribe while
 *   still waiting withdraws the request.
 * - Errors with the acquire's error, or with `lease_lost` when the slot is lost while held
 *   (the work is unsubscribed first).
 * - Cold: each subscription takes its own slot.
 *
 * ## Example
 * ```ts
 * import { defer } from 'rxjs';
 * import { Semaphore, underLimiter } from 'svc-stream';
 *
 * const slots = new Semaphore(2);
 * const call$ = underLimiter(slots, defer(() => fetch('http://127.0.0.1:8080/health')));
 * call$.subscribe((res) => console.log(res.status)); // at most two in flight at once
 * ```
 */
export function underLimiter<T>(limiter: ConcurrencyLimiter, work$: Observable<T>): Observable<T> {
  return new Observable<T>((subscriber) => {
    const waiting = new AbortController();
    let lease: LimiterLease | undefined;
    let inner: { unsubscribe(): void } | undefined;
    let closed = false;
    const onLost = (): void => {
      inner?.unsubscribe();
      const reason = lease?.lost?.reason;
      subscriber.error(reason instanceof SvcError ? reason : new SvcError('lease_lost', 'the concurrency slot was lost while held', { retryable: true, cause: reason }));
    };
    const start = (l: LimiterLease): void => {
      if (closed) {
        l.release();
        return;
      }
      lease = l;
      if (l.lost?.aborted) return onLost();
      l.lost?.addEventListener('abort', onLost, { once: true });
      // Its own subscriber, so a lost lease can unsubscribe the work and still error ours.
      inner = work$.subscribe(operatorSubscriber<T>(subscriber, {}));
    };
    let withdraw: (() => void) | undefined;
    if (limiter.request) withdraw = limiter.request(start);
    else {
      limiter.acquire(waiting.signal).then(start, (err: unknown) => {
        if (!closed) subscriber.error(err);
      });
    }
    return () => {
      closed = true;
      withdraw?.();
      waiting.abort();
      inner?.unsubscribe();
      lease?.lost?.removeEventListener('abort', onLost);
      lease?.release();
    };
  });
}
