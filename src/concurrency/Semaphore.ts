// A counting semaphore in one process: the in-process ConcurrencyLimiter (src/concurrency/limiter.ts),
// used by the batch calls (one per model, base URL and key) and by whoever needs a FIFO bound.
import { Observable } from 'rxjs';
import { InputError, SvcError } from '../errors/index.js';
import { underLimiter, type ConcurrencyLimiter, type LimiterLease } from './limiter.js';
import { MAX_BATCH_CONCURRENCY } from '../schema/limits.js';

/**
 * A counting semaphore whose permits are held by subscriptions (`run`) or leases (`acquire`),
 * handed out first come, first served.
 *
 * ## Example
 * ```ts
 * import { defer } from 'rxjs';
 * import { Semaphore } from 'svc-stream';
 *
 * const slots = new Semaphore(3);
 * const lease = await slots.acquire(); // or: slots.run(work$)
 * try {
 *   await fetch('http://127.0.0.1:8080/health');
 * } finally {
 *   lease.release();
 * }
 * console.log(slots.inUse, slots.peak); // 0 1
 * ```
 */
export class Semaphore implements ConcurrencyLimiter {
  private current: number;
  private active = 0;
  private peakActive = 0;
  private readonly queue: (() => void)[] = [];
  private readonly max: number;

  /**
   * `limit` permits. `max` is the largest limit accepted: by default 25, the most an
   * organization's concurrency can be per model (§8); a bound of your own (analyzeCalls'
   * sessions over several keys) passes `Infinity`.
   */
  constructor(limit: number, options: { readonly max?: number | undefined } = {}) {
    this.max = options.max ?? MAX_BATCH_CONCURRENCY;
    this.current = checkConcurrency(limit, this.max);
  }

  /** Permits available at once. Raising it starts queued work; lowering it lets running work finish. */
  get limit(): number {
    return this.current;
  }
  set limit(n: number) {
    this.current = checkConcurrency(n, this.max);
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
   * Run `work$` under a permit: `underLimiter(this, work$)`. Subscribes to it at once when a
   * permit is free and nobody waits, else when its turn comes (first come, first served), and
   * releases the permit when it completes, errors or is unsubscribed. Cold.
   */
  run<T>(work$: Observable<T>): Observable<T> {
    return underLimiter(this, work$);
  }

  /**
   * Wait for a permit (first come, first served, in the same queue as `run`) and resolve with
   * its lease. Rejects with `aborted` when `signal` aborts first, withdrawing the request.
   */
  acquire(signal?: AbortSignal): Promise<LimiterLease> {
    return new Promise<LimiterLease>((resolve, reject) => {
      if (signal?.aborted) return reject(new SvcError('aborted', 'waiting for a concurrency permit was aborted', { cause: signal.reason }));
      let withdraw: (() => void) | undefined;
      const onAbort = (): void => {
        withdraw?.();
        reject(new SvcError('aborted', 'waiting for a concurrency permit was aborted', { cause: signal?.reason }));
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      withdraw = this.request((lease) => {
        signal?.removeEventListener('abort', onAbort);
        resolve(lease);
      });
    });
  }

  /**
   * `acquire` in callback form: `grant` gets the lease when a permit is free, synchronously
   * when one is free now and nobody waits. Returns a function that withdraws the request.
   */
  request(grant: (lease: LimiterLease) => void): () => void {
    const start = (): void => grant(this.grant());
    this.queue.push(start);
    this.drain();
    return () => {
      const i = this.queue.indexOf(start);
      if (i >= 0) this.queue.splice(i, 1);
    };
  }

  /** Take a permit and hand out its lease. */
  private grant(): LimiterLease {
    this.active++;
    if (this.active > this.peakActive) this.peakActive = this.active;
    let released = false;
    return {
      release: () => {
        if (released) return;
        released = true;
        this.active--;
        // Let the finished work's outcome reach its subscriber (catchError unsubscribes the
        // source before emitting its replacement) before the next waiting work starts.
        queueMicrotask(() => this.drain());
      },
    };
  }

  private drain(): void {
    while (this.active < this.current && this.queue.length > 0) this.queue.shift()!();
  }
}

function checkConcurrency(n: number, max: number): number {
  if (!Number.isInteger(n) || n < 1 || n > max) {
    throw new InputError('invalid_argument', `concurrency must be an integer from 1${Number.isFinite(max) ? ` to ${max}` : ' up'}, got ${n}`, { path: 'concurrency' });
  }
  return n;
}
