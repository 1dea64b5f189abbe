// When a failed batch call is tried again, decided from the classified error's code (§7.2,
// §7.4) and never from the status alone; every wait is a scheduler timer.
import { asyncScheduler, retry, timer, type MonoTypeOperatorFunction, type SchedulerLike } from 'rxjs';
import { SvcError, type ErrorCode } from '../errors/index.js';

/** How retries back off. Every field is optional; `false` instead of a policy turns retries off. */
export interface RetryPolicy {
  /** Retries after a concurrency-limit rejection. Default 6. */
  readonly concurrencyRetries?: number | undefined;
  /** First wait after a concurrency-limit rejection, ms ("wait a few seconds", §7.4). Default 2000. */
  readonly concurrencyDelayMs?: number | undefined;
  /** Retries after 502, 503, 504, an unexplained 429 or a dropped connection. Default 3. */
  readonly transientRetries?: number | undefined;
  /** First wait after a transient failure, ms. Default 1000. */
  readonly transientDelayMs?: number | undefined;
  /** Growth of the wait per retry. Default 2. */
  readonly factor?: number | undefined;
  /** Longest single wait, ms. Default 30 000. */
  readonly maxDelayMs?: number | undefined;
  /** Share of each wait that is random, 0…1 ("full jitter" at 1). Default 0.5. */
  readonly jitter?: number | undefined;
  /** Source of randomness for the jitter, for tests. Default Math.random. */
  readonly random?: (() => number) | undefined;
}

/** How the retry policy treats each cause. */
export type RetryClass = 'concurrency' | 'transient' | 'never';

/** Causes that are tried again after "a few seconds": capacity frees as requests finish. */
const CONCURRENCY: ReadonlySet<ErrorCode> = new Set<ErrorCode>(['concurrency_limit']);
/** Causes that may pass on their own: 502, 503, 504, an unexplained 429, a dropped connection. */
const TRANSIENT: ReadonlySet<ErrorCode> = new Set<ErrorCode>(['upstream_unavailable', 'service_unavailable', 'timeout', 'rate_limited', 'connection_failed', 'connection_lost']);

/**
 * Causes after which no other file of the run can succeed either: the key, the organization's
 * credits or credit limit, or (since a run uses one model) the model's access or quota.
 */
export const RUN_STOPPING_CODES: ReadonlySet<ErrorCode> = new Set<ErrorCode>([
  'invalid_api_key',
  'no_model_access',
  'not_permitted',
  'usage_denied',
  'insufficient_credits',
  'monthly_usage_limit',
  'monthly_credit_limit',
  'limit_exceeded',
]);

/** The retry class of an error; anything that is not an SvcError is never retried. */
export function retryClassOf(err: unknown): RetryClass {
  if (!(err instanceof SvcError)) return 'never';
  if (CONCURRENCY.has(err.code)) return 'concurrency';
  if (TRANSIENT.has(err.code)) return 'transient';
  return 'never';
}

/** Whether an error ends a whole run over many files (see RUN_STOPPING_CODES). */
export function stopsRun(err: unknown): boolean {
  return err instanceof SvcError && RUN_STOPPING_CODES.has(err.code);
}

/**
 * The wait before retry number `attempt` (1-based) after `err`, in ms, or undefined when the
 * error must not be retried or the retries of its class are used up.
 */
export function retryDelay(err: unknown, attempt: number, policy: RetryPolicy = {}): number | undefined {
  const cls = retryClassOf(err);
  if (cls === 'never') return undefined;
  const max = cls === 'concurrency' ? policy.concurrencyRetries ?? 6 : policy.transientRetries ?? 3;
  if (attempt > max) return undefined;
  const base = cls === 'concurrency' ? policy.concurrencyDelayMs ?? 2000 : policy.transientDelayMs ?? 1000;
  const raw = Math.min(policy.maxDelayMs ?? 30_000, base * (policy.factor ?? 2) ** (attempt - 1));
  const jitter = Math.min(1, Math.max(0, policy.jitter ?? 0.5));
  const r = (policy.random ?? Math.random)();
  return Math.round(raw * (1 - jitter) + raw * jitter * r);
}

/**
 * Resubscribe to the source after a retryable failure, waiting `retryDelay` on `scheduler`
 * between attempts; any other error, or one whose retries are used up, passes through.
 * `onRetry` sees every retry before its wait.
 */
export function retryByCause<T>(
  policy: RetryPolicy | false | undefined,
  scheduler: SchedulerLike = asyncScheduler,
  onRetry?: (err: unknown, attempt: number, delayMs: number) => void,
): MonoTypeOperatorFunction<T> {
  if (policy === false) return (source) => source;
  return retry<T>({
    delay: (err: unknown, attempt: number) => {
      const ms = retryDelay(err, attempt, policy ?? {});
      if (ms === undefined) throw err;
      onRetry?.(err, attempt, ms);
      return timer(ms, scheduler);
    },
  });
}
