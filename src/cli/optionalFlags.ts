// The flags whose feature needs an optional package (the fleet's Redis clients), checked before
// a command starts anything: not installed is one line with the install command, exit status 2.
import { importOptional } from '../internal/optionalPackage.js';
import { loadPromClient } from '../service/metrics.js';

/** `--metrics-port` needs prom-client (an optional dependency): checked before anything starts. */
export async function checkMetricsPackage(metricsPort: number | undefined): Promise<void> {
  if (metricsPort !== undefined) await loadPromClient('--metrics-port');
}

/** The flags (or their variables) a command was given that need the fleet's packages. */
export interface FleetFlags {
  /** `--redis URL` or SVC_REDIS_URL: ioredis and redis-semaphore. */
  readonly redis?: string | undefined;
  /** `--publish URL` or SVC_PUBLISH_URL: ioredis. */
  readonly publish?: string | undefined;
  /** `--from URL`: ioredis. */
  readonly from?: string | undefined;
}

/**
 * Load what the given flags need now; `missing_dependency` naming the flag and the npm command
 * when a package is not installed (the command exits 2 before it starts anything).
 */
export async function checkFleetPackages(flags: FleetFlags, env: NodeJS.ProcessEnv): Promise<void> {
  const redis = flags.redis ?? env['SVC_REDIS_URL'];
  const publish = flags.publish ?? env['SVC_PUBLISH_URL'];
  if (redis) {
    const needs = ['ioredis', 'redis-semaphore'];
    const feature = flags.redis !== undefined ? '--redis' : 'SVC_REDIS_URL';
    await importOptional('ioredis', feature, needs, () => import('ioredis'));
    await importOptional('redis-semaphore', feature, needs, () => import('redis-semaphore'));
  }
  if (publish) await importOptional('ioredis', flags.publish !== undefined ? '--publish' : 'SVC_PUBLISH_URL', ['ioredis'], () => import('ioredis'));
  if (flags.from) await importOptional('ioredis', '--from', ['ioredis'], () => import('ioredis'));
}

/** `svc-stream queue`'s packages (BullMQ and ioredis; redis-semaphore for `work`), checked before it connects anywhere. */
export async function checkQueuePackages(work: boolean): Promise<void> {
  const needs = work ? ['bullmq', 'ioredis', 'redis-semaphore'] : ['bullmq', 'ioredis'];
  await importOptional('ioredis', 'svc-stream queue', needs, () => import('ioredis'));
  await importOptional('bullmq', 'svc-stream queue', needs, () => import('bullmq'));
  if (work) await importOptional('redis-semaphore', 'svc-stream queue', needs, () => import('redis-semaphore'));
}
