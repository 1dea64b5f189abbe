// Where a call's session waits for its turn: the session slots of analyzeCalls, in this process
// (first come, first served, granted in the tick the session asks when one is free) or shared
// by every worker of `callWorkers` (the primary keeps the count).
import { Observable } from 'rxjs';
import { underLimiter } from '../limiter.js';
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

/**
 * `max` slots in this process: a FIFO of waiting grants, a free slot granted in the very tick
 * the session is subscribed. (The in-process `Semaphore`, once it grants synchronously and takes
 * a bound above 25, replaces this.)
 */
export function localSlots(max: number): CallSlots {
  let held = 0;
  const queue: Array<() => void> = [];
  const drain = (): void => {
    while (held < max && queue.length > 0) queue.shift()!();
  };
  const run = <T>(work$: Observable<T>): Observable<T> =>
    new Observable<T>((subscriber) => {
      let granted = false;
      let inner: { unsubscribe(): void } | undefined;
      const start = (): void => {
        granted = true;
        held++;
        inner = work$.subscribe(subscriber);
      };
      if (held < max && queue.length === 0) start();
      else queue.push(start);
      return () => {
        const i = queue.indexOf(start);
        if (i >= 0) queue.splice(i, 1);
        inner?.unsubscribe();
        if (!granted) return;
        granted = false;
        held--;
        // The finished call's outcome reaches its subscriber before the next call starts.
        queueMicrotask(drain);
      };
    });
  return { full: () => held >= max, run };
}

/** `max` slots shared by every worker: each grant is the primary's; with `wait` false a call finding none free is refused. */
export function workerSlots(handle: WorkerHandle, max: number, wait: boolean): CallSlots {
  const limiter = handle.slots(max, wait);
  return { full: () => false, run: (work$) => underLimiter(limiter, work$) };
}
