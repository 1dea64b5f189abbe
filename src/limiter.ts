// The one shape every concurrency bound has: acquire a slot (waiting, abortable), get a lease
// back, release it once. The in-process Semaphore and the fleet's Redis limiter both fit it.
import { Observable } from 'rxjs';
import { SvcError } from './errors.js';

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
 * Run `work$` under a slot of `limiter`: subscribes to it once the slot is granted and
 * releases the slot when it completes, errors or is unsubscribed (an unsubscribe while still
 * waiting withdraws the request). Errors with the acquire's error, or with `lease_lost` when
 * the slot is lost while held (the work is unsubscribed first). Cold.
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
    limiter.acquire(waiting.signal).then(
      (l) => {
        if (closed) {
          l.release();
          return;
        }
        lease = l;
        if (l.lost?.aborted) return onLost();
        l.lost?.addEventListener('abort', onLost, { once: true });
        inner = work$.subscribe(subscriber);
      },
      (err: unknown) => {
        if (!closed) subscriber.error(err);
      },
    );
    return () => {
      closed = true;
      waiting.abort();
      inner?.unsubscribe();
      lease?.lost?.removeEventListener('abort', onLost);
      lease?.release();
    };
  });
}
