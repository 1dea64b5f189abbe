// Connections to Redis for the fleet: ioredis loaded on first use (an optional peer), clients
// that fail a command at once while disconnected instead of queueing it, URLs named without
// their password, and a Redis failure as the one typed error.
import type { Redis, RedisOptions } from 'ioredis';
import { InputError, SvcError } from '../errors/index.js';
import { importOptional } from '../internal/optionalPackage.js';
import { redact } from '../redact.js';

/** The URL with any password replaced, for messages. */
export function redactRedisUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    return u.toString();
  } catch {
    return redact(url, []);
  }
}

/** Checks a Redis URL (`redis://` or `rediss://`); `path` names the option in the error. */
export function checkRedisUrl(url: string, path = 'redis'): string {
  if (!/^rediss?:\/\//.test(url)) throw new InputError('invalid_argument', `the Redis URL must start with redis:// or rediss://, got ${JSON.stringify(redactRedisUrl(url))}`, { path });
  return url;
}

/** The URL `--redis`, `SVC_REDIS_URL` or the default name. */
export function resolveRedisUrl(url: string | undefined, env: NodeJS.ProcessEnv = process.env): string {
  return checkRedisUrl(url ?? env['SVC_REDIS_URL'] ?? 'redis://127.0.0.1:6379');
}

const BASE_OPTIONS: RedisOptions = { enableOfflineQueue: false, maxRetriesPerRequest: 1, connectTimeout: 5000, commandTimeout: 5000 };

async function loadClient(feature: string): Promise<new (url: string, options: RedisOptions) => Redis> {
  const { Redis: RedisClient } = await importOptional('ioredis', feature, ['ioredis'], () => import('ioredis'));
  return RedisClient as unknown as new (url: string, options: RedisOptions) => Redis;
}

/** Connect an ioredis client that fails commands at once while disconnected (no silent queueing). */
export async function connectRedis(url: string, extra: RedisOptions = {}): Promise<Redis> {
  const RedisClient = await loadClient('svc-stream/fleet');
  const client = new RedisClient(url, { ...BASE_OPTIONS, lazyConnect: true, ...extra });
  // ioredis reports every reconnect failure as an 'error' event; the commands that fail carry it.
  client.on('error', () => undefined);
  try {
    await client.connect();
  } catch (err) {
    client.disconnect();
    throw redisError(err, `cannot connect to Redis at ${redactRedisUrl(url)}`);
  }
  return client;
}

/**
 * An ioredis client that connects in the background and reconnects for ever (backing off to
 * 2 s), failing commands at once while it is away: for the fleet's streams, where an outage is
 * counted and outlived, never a reason to stop. Rejects only when ioredis is not installed.
 */
export async function openRedis(url: string, feature: string, extra: RedisOptions = {}): Promise<Redis> {
  const RedisClient = await loadClient(feature);
  const client = new RedisClient(url, { ...BASE_OPTIONS, retryStrategy: (times: number) => Math.min(50 * times, 2000), ...extra });
  client.on('error', () => undefined);
  return client;
}

/** A Redis failure as the typed error. */
export function redisError(err: unknown, what: string): SvcError {
  if (err instanceof SvcError) return err;
  return new SvcError('redis_unavailable', `${what}: ${(err as Error)?.message ?? String(err)}`, { retryable: true, cause: err });
}
