// A batch run spread over many machines: files go into a BullMQ queue in Redis, workers take
// them, call the batch endpoint under the fleet's shared limit, and store each outcome. This
// file is the producers' and readers' side; a job's shape is batchJobs.ts's, the worker batchWorker.ts's.
import type { Job, Queue } from 'bullmq';
import { InputError } from '../errors/index.js';
import { importOptional } from '../internal/optionalPackage.js';
import { outcomeOf, QUEUE_MODELS, type BatchJobData, type BatchJobOutcome, type QueueModel } from './batchJobs.js';
import { connectRedis, redactRedisUrl, redisError, resolveRedisUrl } from './redisLimiter.js';

/** Jobs by state. */
export interface BatchQueueCounts {
  readonly waiting: number;
  readonly active: number;
  readonly delayed: number;
  readonly completed: number;
  readonly failed: number;
}

/** Where a batch queue lives: the Redis URL, the queue's name and BullMQ's key prefix. */
export interface BatchQueueOptions {
  /** Redis URL. Default `SVC_REDIS_URL`, then `redis://127.0.0.1:6379`. */
  readonly url?: string | undefined;
  /** Queue name. Default `svc-stream-batch`. */
  readonly name?: string | undefined;
  /** BullMQ key prefix. Default `bull`. */
  readonly prefix?: string | undefined;
}

/** Options of {@link BatchQueue.add}: the model and the tries per job. */
export interface AddOptions {
  /** Default `audio-event`. */
  readonly model?: QueueModel | undefined;
  /**
   * Tries per job when the failure is the fleet's (Redis away, a lost slot), not the file's.
   * Default 3. A file's own failure (rejected by the service, after the call's retries by
   * cause) is final at once.
   */
  readonly attempts?: number | undefined;
}

/** A handle on the queue for producers and for reading outcomes. */
export interface BatchQueue {
  readonly name: string;
  /** Enqueue one job per file; resolves with the number added. */
  add(files: readonly string[], options?: AddOptions): Promise<number>;
  /** How many jobs wait, run, are done and failed. */
  counts(): Promise<BatchQueueCounts>;
  /** Every job's outcome, oldest first (pending jobs by state). */
  results(): AsyncIterable<BatchJobOutcome>;
  /** Remove every job and the queue's keys. */
  obliterate(): Promise<void>;
  /** Close the queue's Redis connection. */
  close(): Promise<void>;
}

const DEFAULT_QUEUE = 'svc-stream-batch';

/** The connection options BullMQ opens its own ioredis connections from. */
export function connectionOf(url: string, extra: Record<string, unknown> = {}): { url: string } & Record<string, unknown> {
  // BullMQ opens its own ioredis connections from this; the worker's must wait out reconnects.
  return { url, ...extra };
}

/** BullMQ, an optional peer dependency, loaded on first use. */
export async function bullmq(): Promise<typeof import('bullmq')> {
  return importOptional('bullmq', 'the batch queue', ['bullmq', 'ioredis'], () => import('bullmq'));
}

/**
 * Open the batch queue in Redis, to add files and read outcomes. BullMQ and ioredis are
 * imported on first use.
 *
 * ## Example
 * ```ts
 * import { createBatchQueue } from 'svc-stream/fleet';
 *
 * const queue = await createBatchQueue({ url: 'redis://10.0.0.5:6379' });
 * await queue.add(['/mnt/calls/a.wav', '/mnt/calls/b.wav'], { model: 'emotion' });
 * console.log(await queue.counts());
 * await queue.close();
 * ```
 */
export async function createBatchQueue(options: BatchQueueOptions = {}): Promise<BatchQueue> {
  const url = resolveRedisUrl(options.url);
  const name = options.name ?? DEFAULT_QUEUE;
  const { Queue } = await bullmq();
  // BullMQ waits out an unreachable Redis forever; ask once first, to fail fast and typed.
  (await connectRedis(url)).disconnect();
  const queue: Queue<BatchJobData> = new Queue<BatchJobData>(name, {
    connection: connectionOf(url, { enableOfflineQueue: false, maxRetriesPerRequest: 1, connectTimeout: 5000 }),
    ...(options.prefix ? { prefix: options.prefix } : {}),
  });
  queue.on('error', () => undefined);
  try {
    await Promise.race([
      queue.waitUntilReady(),
      new Promise((_, reject) => setTimeout(() => reject(new Error('not ready within 10 s')), 10_000).unref()),
    ]);
  } catch (err) {
    await queue.close().catch(() => undefined);
    throw redisError(err, `cannot open the batch queue at ${redactRedisUrl(url)}`);
  }
  const guard = async <T>(what: string, fn: () => Promise<T>): Promise<T> => {
    try {
      return await fn();
    } catch (err) {
      throw redisError(err, what);
    }
  };
  return {
    name,
    add(files, addOptions = {}) {
      const model = addOptions.model ?? 'audio-event';
      if (!QUEUE_MODELS.includes(model)) throw new InputError('invalid_argument', `model must be one of ${QUEUE_MODELS.join(', ')}, got ${JSON.stringify(model)}`, { path: 'model' });
      const attempts = addOptions.attempts ?? 3;
      return guard('cannot add to the batch queue', async () => {
        const jobs = await queue.addBulk(
          files.map((file) => ({
            name: model,
            data: { file, model },
            opts: { attempts, backoff: { type: 'exponential', delay: 1000 }, removeOnComplete: false, removeOnFail: false },
          })),
        );
        return jobs.length;
      });
    },
    counts() {
      return guard('cannot read the batch queue', async () => {
        const c = await queue.getJobCounts('waiting', 'active', 'delayed', 'completed', 'failed', 'prioritized');
        return {
          waiting: (c['waiting'] ?? 0) + (c['prioritized'] ?? 0),
          active: c['active'] ?? 0,
          delayed: c['delayed'] ?? 0,
          completed: c['completed'] ?? 0,
          failed: c['failed'] ?? 0,
        };
      });
    },
    async *results() {
      const states = ['completed', 'failed', 'active', 'waiting', 'delayed'] as const;
      for (const state of states) {
        const page = 500;
        for (let start = 0; ; start += page) {
          const jobs = await guard('cannot read the batch queue', () => queue.getJobs([state], start, start + page - 1, true));
          for (const job of jobs) if (job) yield outcomeOf(job as Job<BatchJobData>, state);
          if (jobs.length < page) break;
        }
      }
    },
    obliterate: () => guard('cannot clear the batch queue', () => queue.obliterate({ force: true })),
    close: () => queue.close(),
  };
}
