// Process-wide concurrency bounds for batch calls: one FIFO semaphore per model, base URL and
// key, shared by every call, because the service's limit is per organization and model (§8).
import { createHash } from 'node:crypto';
import { Observable } from 'rxjs';
import { InputError, SvcError } from '../errors.js';
import { operatorSubscriber } from '../internal/operate.js';
import { underLimiter, type ConcurrencyLimiter, type LimiterLease, type LimiterSource, type LimiterTarget } from '../limiter.js';

export type { LimiterTarget } from '../limiter.js';

/** The service's stated default concurrency per model (§8). */
export const DEFAULT_BATCH_CONCURRENCY = 3;
/** The most an organization can set without the operator's approval (§8). */
export const MAX_BATCH_CONCURRENCY = 25;

/** A counting semaphore whose permits are held by subscriptions (`run`) or leases (`acquire`). */
export class Semaphore implements ConcurrencyLimiter {
  private current: number;
  private active = 0;
  private peakActive = 0;
  private readonly queue: (() => void)[] = [];

  constructor(limit: number) {
    this.current = checkConcurrency(limit);
  }

  /** Permits available at once. Raising it starts queued work; lowering it lets running work finish. */
  get limit(): number {
    return this.current;
  }
  set limit(n: number) {
    this.current = checkConcurrency(n);
    this.drain();
  }
  /** Permits held now. */
  get inUse(): number {
    return this.active;
  }
  /** The most permits ever held at once. */
  get peak(): number {
    return this.peakActive;
  }
  /** Subscriptions waiting for a permit. */
  get waiting(): number {
    return this.queue.length;
  }

  /**
   * Run `work$` under a permit: subscribes to it once a permit is free (first come, first
   * served) and releases the permit when it completes, errors or is unsubscribed. Cold.
   */
  run<T>(work$: Observable<T>): Observable<T> {
    return new Observable<T>((subscriber) => {
      let granted = false;
      let released = false;
      let inner: { unsubscribe(): void } | undefined;
      const release = (): void => {
        if (!granted || released) return;
        released = true;
        this.active--;
        // Let the finished work's outcome reach its subscriber (catchError unsubscribes the
        // source before emitting its replacement) before the next waiting work starts.
        queueMicrotask(() => this.drain());
      };
      const start = (): void => {
        granted = true;
        this.active++;
        if (this.active > this.peakActive) this.peakActive = this.active;
        // The permit goes back in the teardown that follows error or complete.
        inner = work$.subscribe(operatorSubscriber<T>(subscriber, {}));
      };
      this.queue.push(start);
      this.drain();
      return () => {
        const i = this.queue.indexOf(start);
        if (i >= 0) this.queue.splice(i, 1);
        inner?.unsubscribe();
        release();
      };
    });
  }

  /**
   * Wait for a permit (first come, first served, in the same queue as `run`) and resolve with
   * its lease. Rejects with `aborted` when `signal` aborts first, withdrawing the request.
   */
  acquire(signal?: AbortSignal): Promise<LimiterLease> {
    return new Promise<LimiterLease>((resolve, reject) => {
      if (signal?.aborted) return reject(new SvcError('aborted', 'waiting for a concurrency permit was aborted', { cause: signal.reason }));
      const onAbort = (): void => {
        const i = this.queue.indexOf(start);
        if (i >= 0) this.queue.splice(i, 1);
        reject(new SvcError('aborted', 'waiting for a concurrency permit was aborted', { cause: signal?.reason }));
      };
      const start = (): void => {
        signal?.removeEventListener('abort', onAbort);
        this.active++;
        if (this.active > this.peakActive) this.peakActive = this.active;
        let released = false;
        resolve({
          release: () => {
            if (released) return;
            released = true;
            this.active--;
            queueMicrotask(() => this.drain());
          },
        });
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.queue.push(start);
      this.drain();
    });
  }

  private drain(): void {
    while (this.active < this.current && this.queue.length > 0) this.queue.shift()!();
  }
}

function checkConcurrency(n: number): number {
  if (!Number.isInteger(n) || n < 1 || n > MAX_BATCH_CONCURRENCY) {
    throw new InputError('invalid_argument', `concurrency must be an integer from 1 to ${MAX_BATCH_CONCURRENCY}, got ${n}`, { path: 'concurrency' });
  }
  return n;
}

const limiters = new Map<string, Semaphore>();

function limiterKey(t: LimiterTarget): string {
  // The key itself never sits in a long-lived structure; a short hash tells organizations apart.
  const keyHash = createHash('sha256').update(t.apiKey).digest('hex').slice(0, 16);
  return `${t.model} ${t.baseUrl.replace(/\/+$/, '')} ${keyHash}`;
}

/**
 * The shared semaphore for one model, base URL and key, created at the default of 3 on first
 * use. Passing `concurrency` sets its limit for every caller (the last value set wins).
 */
export function batchLimiter(target: LimiterTarget, concurrency?: number): Semaphore {
  const k = limiterKey(target);
  let s = limiters.get(k);
  if (!s) {
    s = new Semaphore(concurrency ?? DEFAULT_BATCH_CONCURRENCY);
    limiters.set(k, s);
  } else if (concurrency !== undefined && concurrency !== s.limit) {
    s.limit = concurrency;
  }
  return s;
}

/**
 * What a batch call runs its attempts under: the shared limiter of `source` for the target
 * when one is given (a fleet's Redis limits), else the process-wide semaphore.
 */
export function slotsFor(source: LimiterSource | undefined, target: LimiterTarget, concurrency?: number): { run<T>(work$: Observable<T>): Observable<T> } {
  if (!source) return batchLimiter(target, concurrency);
  const limiter = source.limiterFor(target);
  return { run: <T>(work$: Observable<T>) => underLimiter(limiter, work$) };
}
