// `--redis URL` (or SVC_REDIS_URL) for every command that takes a concurrency slot: the
// organization's slots shared with the rest of the fleet. Redis code loads only when asked.
import type { LimiterSource } from '../concurrency/limiter.js';
import { option } from './options.js';

/** `--redis URL`, for the one option parser (options.ts). */
export const REDIS_OPTION = {
  redis: option.text('URL', "share the organization's concurrency slots with a fleet through Redis\n(default SVC_REDIS_URL; without either, this process limits only itself)"),
} as const;

export interface FleetLimits {
  /** The shared limits, when a Redis URL was given. */
  readonly limiter: LimiterSource | undefined;
  close(): Promise<void>;
}

/**
 * Connect the shared limits named by `--redis` or SVC_REDIS_URL (slots per model: `concurrency`,
 * default 3); nothing at all without either.
 */
export async function fleetLimits(flag: string | undefined, env: NodeJS.ProcessEnv, concurrency?: number): Promise<FleetLimits> {
  const url = flag ?? env['SVC_REDIS_URL'];
  if (!url) return { limiter: undefined, close: async () => undefined };
  const { createRedisLimits, resolveRedisUrl } = await import('../fleet/redisLimiter.js');
  const limits = await createRedisLimits({ url: resolveRedisUrl(url, env), ...(concurrency !== undefined ? { concurrency } : {}) });
  return { limiter: limits, close: () => limits.close() };
}
