// A Redis the command cannot take calls without (the shared limits of --redis, the sessions of
// relay --from), watched for /readyz: a ping every 2 s on a connection of its own, so a Redis
// that is gone, refusing or paused shows as not ready within a few seconds.
import type { Redis } from 'ioredis';
import type { CallServer } from '../service/lifecycle.js';

const EVERY_MS = 2_000;
const TIMEOUT_MS = 1_500;

/** A Redis dependency, as the life cycle sees it: `unready` while the last ping failed. */
export interface RedisHealth extends CallServer {
  close(): Promise<void>;
}

/** Watch `url` (loads ioredis, which the flag that names the URL needs anyway); `what` names it in the reason. */
export async function watchRedis(url: string, what: string): Promise<RedisHealth> {
  const { Redis: RedisClient } = (await import('ioredis')) as unknown as { Redis: new (url: string, options: object) => Redis };
  const client = new RedisClient(url, { enableOfflineQueue: false, maxRetriesPerRequest: 1, connectTimeout: TIMEOUT_MS, retryStrategy: (n: number) => Math.min(100 * n, 2_000), lazyConnect: false });
  client.on('error', () => undefined);
  let ok: boolean | undefined;
  const ping = async (): Promise<void> => {
    let timer: NodeJS.Timeout | undefined;
    try {
      await Promise.race([client.ping(), new Promise((_r, reject) => (timer = setTimeout(() => reject(new Error('timeout')), TIMEOUT_MS)))]);
      ok = true;
    } catch {
      ok = false;
    } finally {
      clearTimeout(timer);
    }
  };
  const timer = setInterval(() => void ping(), EVERY_MS);
  timer.unref();
  void ping();
  return {
    inFlight: 0,
    stopAccepting: () => undefined,
    endCalls: () => undefined,
    get unready() {
      return ok === false ? `${what}: Redis does not answer` : undefined;
    },
    metrics: () => [
      { name: 'svc_stream_redis_up', help: 'Whether a Redis the command needs (label dependency: --redis, --from) answered its last ping: 1 or 0.', type: 'gauge', labels: ['dependency'], samples: () => [{ labels: { dependency: what }, value: ok === false ? 0 : 1 }] },
    ],
    async close() {
      clearInterval(timer);
      client.disconnect();
    },
  };
}
