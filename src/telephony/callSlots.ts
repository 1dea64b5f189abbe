// Where a call's session waits for its turn: the session slots of analyzeCalls, in this process
// (a Semaphore) or shared by every worker of `callWorkers` (the primary keeps the count); either
// way the session runs under its slot through the one `underLimiter`.
import type { Observable } from 'rxjs';
import { underLimiter } from '../concurrency/limiter.js';
import { Semaphore } from '../concurrency/Semaphore.js';
import type { WorkerHandle } from './callWorker.js';

/** The session slots of one analyzeCalls subscription. */
export interface CallSlots {
  /** Whether a call arriving now finds every slot taken (`whenFull: 'reject'` refuses it here; across workers the primary says). */
  full(): boolean;
  /**
   * Run `work$` under a slot: subscribed once one is granted (synchronously when one is free in
   * this process), released when it ends or is unsubscribed; an unsubscribe while waiting
   * withdraws the request. Errors with `concurrency_limit` when the shared slots refuse a call
   * that may not wait.
   */
  run<T>(work$: Observable<T>): Observable<T>;
}

/** `max` slots in this process: the in-process `Semaphore`, first come, first served, a free slot granted in the very tick the session asks. */
export function localSlots(max: number): CallSlots {
  const semaphore = new Semaphore(max, { max: Infinity });
  return { full: () => semaphore.inUse >= semaphore.limit, run: (work$) => underLimiter(semaphore, work$) };
}

/** `max` slots shared by every worker: each grant is the primary's; with `wait` false a call finding none free is refused. */
export function workerSlots(handle: WorkerHandle, max: number, wait: boolean): CallSlots {
  const limiter = handle.slots(max, wait);
  return { full: () => false, run: (work$) => underLimiter(limiter, work$) };
}
