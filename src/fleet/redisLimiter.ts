// Organization-wide concurrency slots shared by every process of a fleet, held in Redis as
// leases (redis-semaphore on ioredis) that expire when their holder stops refreshing them.
import { createHash } from 'node:crypto';
import type { Redis } from 'ioredis';
import type { Semaphore as RedisSemaphore } from 'redis-semaphore';
import { Semaphore } from '../concurrency/Semaphore.js';
import { InputError, SvcError } from '../errors/index.js';
import type { ConcurrencyLimiter, LimiterLease, LimiterSource, LimiterTarget } from '../concurrency/limiter.js';
import { importOptional } from '../internal/optionalPackage.js';
import { connectRedis, redisError, resolveRedisUrl } from './redisConnection.js';

/** The optional peer dependencies of {@link createRedisLimits}. */
const FLEET_LIMIT_PACKAGES = ['ioredis', 'redis-semaphore'] as const;

export { connectRedis, redactRedisUrl, redisError, resolveRedisUrl } from './redisConnection.js';

/** How the shared limits behave. Every field is optional. */
export interface RedisLimitsOptions {
  /** Redis to connect to (`redis://[user:pass@]host:port[/db]`, `rediss://…`). Default `SVC_REDIS_URL`, then `redis://127.0.0.1:6379`. */
  readonly url?: string | undefined;
  /** An ioredis client to use instead of `url` (not closed by `close()`). Give it `enableOfflineQueue: false` so an outage fails fast. */
  readonly redis?: Redis | undefined;
  /** Slots per model: one number for every model or `{ model: n }`, 1 to 25. Default 3, the service's default (§8). */
  readonly concurrency?: number | Readonly<Record<string, number>> | undefined;
  /** How long a slot outlives its holder when the holder stops refreshing it (killed, partitioned), ms. Default 30 000. */
  readonly leaseMs?: number | undefined;
  /** How often a held slot's lease is renewed, ms. Default a third of `leaseMs`. */
  readonly refreshMs?: number | undefined;
  /** The longest one acquire waits for a slot before failing with `slot_timeout`, ms. Default 600 000. */
  readonly acquireTimeoutMs?: number | undefined;
  /** How often a waiting acquire asks Redis again, ms. Default 50. */
  readonly retryIntervalMs?: number | undefined;
  /** Prefix of every Redis key. Default `svc-stream`. */
  readonly prefix?: string | undefined;
  /**
   * The organization a target belongs to, when several keys share one organization's limits.
   * Default: a hash of the base URL and key (the key itself never reaches Redis).
   */
  readonly organization?: ((target: LimiterTarget) => string) | undefined;
}

/** The shared limiter of one organization and model. */
export interface RedisLimiter extends ConcurrencyLimiter {
  /** The Redis key of its slots (`semaphore:<prefix>:<organization>:<model>`, without the `semaphore:` prefix). */
  readonly key: string;
  /** Slots the whole fleet may hold at once. */
  readonly limit: number;
  /** Slots held now, fleet-wide (expired leases not counted). */
  held(): Promise<number>;
}

/** Limits shared through Redis: a `LimiterSource` for every `limiter` option. */
export interface RedisLimits extends LimiterSource {
  /** The Redis-backed limiter of one organization and model, shared by every process on the same Redis. */
  limiterFor(target: LimiterTarget): RedisLimiter;
  /** Close the Redis connection it opened (not one passed as `redis`). Held leases are released first. */
  close(): Promise<void>;
}

type SemaphoreCtor = typeof RedisSemaphore;

const DEFAULT_LEASE_MS = 30_000;
const DEFAULT_ACQUIRE_TIMEOUT_MS = 600_000;

function checkMs(name: string, v: number | undefined, fallback: number, min = 1): number {
  const n = v ?? fallback;
  if (!Number.isFinite(n) || n < min) throw new InputError('invalid_argument', `${name} must be a number of ms, at least ${min}, got ${v}`, { path: name });
  return n;
}

function limitFor(concurrency: RedisLimitsOptions['concurrency'], model: string): number {
  const n = typeof concurrency === 'number' ? concurrency : concurrency?.[model] ?? 3;
  // The same range as the in-process semaphore: constructing one checks it.
  return new Semaphore(n).limit;
}

/**
 * Concurrency limits shared by every process that uses the same Redis: one semaphore per
 * organization and model, whose slots are leases with a TTL.
 *
 * - `limiterFor(target).acquire(signal)` waits for a slot (first come first served within the
 *   process, fair across processes), up to `acquireTimeoutMs` (`slot_timeout`), and resolves
 *   with a lease. The lease is renewed every `refreshMs` while held, and released by
 *   `release()`; a holder that dies (SIGKILL, a lost machine) stops renewing it, and its slot
 *   comes back after `leaseMs`.
 * - A lease that could not be renewed in time is lost: its `lost` signal aborts with
 *   `lease_lost`, and `underLimiter` stops the work it guarded.
 * - While Redis cannot be reached, acquires fail at once with `redis_unavailable` (they are
 *   not queued in the client).
 * - ioredis and redis-semaphore are optional peer dependencies, imported here on first use: a
 *   process that never calls this never loads them. When one is not installed, rejects with
 *   `SvcError('missing_dependency')`: "createRedisLimits needs ioredis and redis-semaphore: npm
 *   install ioredis redis-semaphore".
 *
 * ## Example
 * ```ts
 * import { from } from 'rxjs';
 * import { createRedisLimits } from 'svc-stream/fleet';
 * import { tagFiles } from 'svc-stream/batch';
 *
 * const limits = await createRedisLimits({ url: 'redis://10.0.0.5:6379', concurrency: 3 });
 * from(['a.wav', 'b.wav']).pipe(tagFiles({ limiter: limits })).subscribe(console.log);
 * // …
 * await limits.close();
 * ```
 */
export async function createRedisLimits(options: RedisLimitsOptions = {}): Promise<RedisLimits> {
  const leaseMs = checkMs('leaseMs', options.leaseMs, DEFAULT_LEASE_MS, 100);
  const refreshMs = checkMs('refreshMs', options.refreshMs, Math.max(50, Math.floor(leaseMs / 3)));
  const acquireTimeoutMs = checkMs('acquireTimeoutMs', options.acquireTimeoutMs, DEFAULT_ACQUIRE_TIMEOUT_MS);
  const retryIntervalMs = checkMs('retryIntervalMs', options.retryIntervalMs, 50);
  const prefix = options.prefix ?? 'svc-stream';
  limitFor(options.concurrency, 'any');
  const { Semaphore: RedisSemaphoreBase } = (await importOptional('redis-semaphore', 'createRedisLimits', FLEET_LIMIT_PACKAGES, () => import('redis-semaphore'))) as { Semaphore: SemaphoreCtor };
  // redis-semaphore renews from a timer and lets a failed renewal escape as an unhandled
  // rejection; here a renewal that cannot reach Redis keeps the lease while it is still
  // valid, and reports it lost (onLockLost) once it has expired.
  class LeasedSemaphore extends RedisSemaphoreBase {
    renewedAt = Date.now();
    protected override async _refresh(): Promise<boolean> {
      try {
        const ok = await super._refresh();
        if (ok) this.renewedAt = Date.now();
        return ok;
      } catch {
        return Date.now() - this.renewedAt < leaseMs;
      }
    }
  }
  const url = options.redis ? undefined : resolveRedisUrl(options.url);
  const client = options.redis ?? (await connectRedis(url!));
  const limiters = new Map<string, RedisLimiter>();
  const held = new Set<RedisSemaphore>();

  const organizationOf =
    options.organization ??
    ((t: LimiterTarget) => createHash('sha256').update(`${t.baseUrl.replace(/\/+$/, '')} ${t.apiKey}`).digest('hex').slice(0, 16));

  function makeLimiter(key: string, limit: number): RedisLimiter {
    // In-process queue in front of Redis: local waiters keep their order, and no more than
    // `limit` of them ask Redis at a time.
    const local = new Semaphore(limit);
    return {
      key,
      limit,
      async held() {
        try {
          const count = await client.zcount(`semaphore:${key}`, Date.now() - leaseMs, '+inf');
          return Number(count);
        } catch (err) {
          throw redisError(err, 'cannot read the shared slots');
        }
      },
      async acquire(signal?: AbortSignal): Promise<LimiterLease> {
        const deadline = Date.now() + acquireTimeoutMs;
        const timedOut = (cause?: unknown): SvcError =>
          new SvcError('slot_timeout', `no concurrency slot of ${key} came free within ${acquireTimeoutMs} ms`, { retryable: true, cause });
        // The deadline covers the wait in the local queue too.
        const localTimeout = AbortSignal.timeout(acquireTimeoutMs);
        let gate: LimiterLease;
        try {
          gate = await local.acquire(signal ? AbortSignal.any([signal, localTimeout]) : localTimeout);
        } catch (err) {
          if (!signal?.aborted && localTimeout.aborted) throw timedOut(err);
          throw err;
        }
        const lost = new AbortController();
        const sem: LeasedSemaphore = new LeasedSemaphore(client, key, limit, {
          lockTimeout: leaseMs,
          refreshInterval: refreshMs,
          acquireTimeout: Math.max(1, deadline - Date.now()),
          retryInterval: retryIntervalMs,
          onLockLost: (err) => {
            held.delete(sem);
            lost.abort(new SvcError('lease_lost', `a concurrency slot of ${key} expired while held (its lease could not be renewed within ${leaseMs} ms)`, { retryable: true, cause: err }));
          },
        });
        try {
          await sem.acquire(signal);
          sem.renewedAt = Date.now();
        } catch (err) {
          gate.release();
          if (signal?.aborted) throw new SvcError('aborted', 'waiting for a shared concurrency slot was aborted', { cause: signal.reason });
          if ((err as Error)?.name === 'TimeoutError') throw timedOut(err);
          throw redisError(err, `cannot take a concurrency slot of ${key}`);
        }
        held.add(sem);
        let released = false;
        return {
          lost: lost.signal,
          release: () => {
            if (released) return;
            released = true;
            held.delete(sem);
            gate.release();
            // When Redis is away the slot expires on its own after leaseMs.
            sem.release().catch(() => sem.stopRefresh());
          },
        };
      },
    };
  }

  return {
    limiterFor(target: LimiterTarget): RedisLimiter {
      const key = `${prefix}:${organizationOf(target)}:${target.model}`;
      let l = limiters.get(key);
      if (!l) {
        l = makeLimiter(key, limitFor(options.concurrency, target.model));
        limiters.set(key, l);
      }
      return l;
    },
    async close() {
      await Promise.allSettled([...held].map((s) => s.release()));
      held.clear();
      if (!options.redis) {
        try {
          await client.quit();
        } catch {
          client.disconnect();
        }
      }
    },
  };
}
