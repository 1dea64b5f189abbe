// A small reusable polling loop: check, classify (pending, done, failed), wait with capped
// exponential backoff, retry transient failures a bounded number of times, give up at a deadline.
import { asyncScheduler, defer, Observable, Subscription, timer, type SchedulerLike } from 'rxjs';
import { operatorSubscriber } from '../internal/operate.js';

/** What one checked value means. */
export type PollVerdict = { readonly kind: 'pending' } | { readonly kind: 'done' } | { readonly kind: 'failed'; readonly error: Error };

/** Timing of {@link poll}: first interval, backoff and cap, overall deadline, transient failures tolerated, abort signal and scheduler. */
export interface PollOptions {
  /** Delay before the second check, in ms; later delays grow by `backoff`. Default 1000. */
  readonly intervalMs?: number | undefined;
  /** Largest delay between checks, in ms. Default 10 000. */
  readonly maxIntervalMs?: number | undefined;
  /** Growth factor of the delay after each check. Default 1.5 (1 keeps it fixed). */
  readonly backoff?: number | undefined;
  /** Overall time allowed from subscription, in ms; `Infinity` for none. Default 15 minutes. */
  readonly deadlineMs?: number | undefined;
  /** Transient failures in a row tolerated before giving up. Default 5. */
  readonly maxConsecutiveTransientErrors?: number | undefined;
  /** Aborting ends the poll with an error. */
  readonly signal?: AbortSignal | undefined;
  /** Where every delay is scheduled. Default `asyncScheduler`; tests pass a virtual-time one. */
  readonly scheduler?: SchedulerLike | undefined;
}

/** What {@link poll} needs to know about one kind of job: how to check it, how to read a value, which failures are transient, and the errors to end with. */
export interface PollSpec<T> {
  /** One check. The signal aborts when the poll is torn down, so an in-flight request is cancelled. */
  check(signal: AbortSignal): Promise<T>;
  /** Decide whether a checked value is still pending, done, or failed. */
  classify(value: T): PollVerdict;
  /** Whether a failed check may be tried again (network, 502, 503, 504…). */
  isTransient(err: unknown): boolean;
  /** The error when the deadline passes, given the last value seen (if any) and the time elapsed. */
  deadlineError(last: T | undefined, elapsedMs: number): Error;
  /** The error after too many transient failures in a row, given the last one. */
  transientLimitError(last: unknown, count: number): Error;
  /** The error when the signal aborts the poll. */
  abortedError(): Error;
}

/** The {@link PollOptions} used where none are given: 1 s first interval, ×1.5 backoff capped at 10 s, 15-minute deadline, 5 transient failures in a row. */
export const DEFAULT_POLL_OPTIONS = {
  intervalMs: 1000,
  maxIntervalMs: 10_000,
  backoff: 1.5,
  deadlineMs: 15 * 60_000,
  maxConsecutiveTransientErrors: 5,
} as const;

/** The delay before check number `n + 1` (n counts from 0). */
export function pollDelay(n: number, options: PollOptions = {}): number {
  const interval = options.intervalMs ?? DEFAULT_POLL_OPTIONS.intervalMs;
  const max = options.maxIntervalMs ?? DEFAULT_POLL_OPTIONS.maxIntervalMs;
  const backoff = options.backoff ?? DEFAULT_POLL_OPTIONS.backoff;
  return Math.min(max, interval * backoff ** n);
}

/**
 * Poll until a checked value is done.
 *
 * - Cold: each subscription runs its own loop; the first check starts at subscription.
 * - Emits every checked value, in order, including the final one.
 * - Completes after emitting a value classified `done`.
 * - Errors after emitting a value classified `failed` (with that verdict's error); at the
 *   deadline; when the signal aborts; on a non-transient check failure; or after more than
 *   `maxConsecutiveTransientErrors` transient failures in a row (a success resets the count).
 * - Unsubscribing cancels the pending delay and aborts the in-flight check; no timer is left.
 */
export function poll<T>(spec: PollSpec<T>, options: PollOptions = {}): Observable<T> {
  return new Observable<T>((subscriber) => {
    const scheduler = options.scheduler ?? asyncScheduler;
    const deadlineMs = options.deadlineMs ?? DEFAULT_POLL_OPTIONS.deadlineMs;
    const maxTransient = options.maxConsecutiveTransientErrors ?? DEFAULT_POLL_OPTIONS.maxConsecutiveTransientErrors;
    const started = scheduler.now();
    const controller = new AbortController();
    const teardown = new Subscription(() => controller.abort());
    let step: Subscription | undefined;
    teardown.add(() => step?.unsubscribe());
    let last: T | undefined;
    let checks = 0;
    let transient = 0;

    const signal = options.signal;
    if (signal?.aborted) {
      subscriber.error(spec.abortedError());
      return teardown;
    }
    if (signal) {
      const onAbort = (): void => subscriber.error(spec.abortedError());
      signal.addEventListener('abort', onAbort, { once: true });
      teardown.add(() => signal.removeEventListener('abort', onAbort));
    }
    if (Number.isFinite(deadlineMs)) {
      teardown.add(timer(deadlineMs, scheduler).subscribe(() => subscriber.error(spec.deadlineError(last, scheduler.now() - started))));
    }

    const schedule = (): void => {
      step?.unsubscribe();
      step = timer(pollDelay(checks - 1, options), scheduler).subscribe(run);
    };
    const run = (): void => {
      checks += 1;
      step?.unsubscribe();
      step = undefined;
      // A throw from `classify` errors the stream at once (not at the deadline).
      const current = defer(() => spec.check(controller.signal)).subscribe(
        operatorSubscriber<T>(subscriber, {
          next: (value) => {
            transient = 0;
            last = value;
            const verdict = spec.classify(value);
            subscriber.next(value);
            if (verdict.kind === 'done') subscriber.complete();
            else if (verdict.kind === 'failed') subscriber.error(verdict.error);
            else schedule();
          },
          error: (err: unknown) => {
            if (!spec.isTransient(err)) subscriber.error(err);
            else if (++transient > maxTransient) subscriber.error(spec.transientLimitError(err, transient));
            else schedule();
          },
          // One check's end is not the poll's.
          complete: () => undefined,
        }),
      );
      // A check that failed synchronously has already scheduled the next one.
      step ??= current;
    };
    run();
    return teardown;
  });
}
