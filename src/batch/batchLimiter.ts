// Process-wide concurrency bounds for batch calls: one FIFO semaphore per model, base URL and
// key, shared by every call, because the service's limit is per organization and model (§8).
import { createHash } from 'node:crypto';
import type { ConcurrencyLimiter, LimiterSource, LimiterTarget } from '../concurrency/limiter.js';
import { DEFAULT_BATCH_CONCURRENCY } from '../schema/limits.js';
import { Semaphore } from '../concurrency/Semaphore.js';

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
export function slotsFor(source: LimiterSource | undefined, target: LimiterTarget, concurrency?: number): ConcurrencyLimiter {
  return source ? source.limiterFor(target) : batchLimiter(target, concurrency);
}
