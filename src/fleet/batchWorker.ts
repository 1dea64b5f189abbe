// A batch worker: jobs taken from the queue, each file sent to its model's batch endpoint under
// the organization's slots shared through Redis, retried by cause, and its outcome stored; it
// watches Redis and the queue once a quarter second (progress, until-empty, Redis lost).
import { fileURLToPath } from 'node:url';
import { lastValueFrom } from 'rxjs';
import type { Job, Worker } from 'bullmq';
import type { Redis } from 'ioredis';
import { detectAudioEvents, detectEmotion } from '../batch/calls.js';
import type { BatchOptions } from '../batch/request.js';
import type { RetryPolicy } from '../batch/retry.js';
import { modelsCredentials } from '../credentials.js';
import { SvcError } from '../errors/index.js';
import { importOptional } from '../internal/optionalPackage.js';
import { positiveInteger } from '../internal/positiveOption.js';
import { INFRASTRUCTURE_CODES, outcomeOf, storedError, type BatchJobData, type BatchJobOutcome } from './batchJobs.js';
import { bullmq, connectionOf, createBatchQueue, type BatchQueue, type BatchQueueCounts, type BatchQueueOptions } from './batchQueue.js';
import { connectRedis, createRedisLimits, redactRedisUrl, redisError, resolveRedisUrl, type RedisLimits } from './redisLimiter.js';

/** What a worker reports as it goes (and when it ends). */
export interface WorkerProgress {
  /** Jobs this worker finished: with a result, with a file's error. */
  readonly done: number;
  readonly failed: number;
  /** The queue, fleet-wide. */
  readonly counts: BatchQueueCounts;
  /** Files finished per second, fleet-wide, since this worker started. */
  readonly rate: number;
  /** Seconds until the queue is empty at that rate; undefined before any file finished. */
  readonly etaSeconds: number | undefined;
}

/** Options of {@link runBatchWorker}: the queue, the models API endpoint and key, concurrency, the shared limiter and when to stop. */
export interface BatchWorkerOptions extends BatchQueueOptions {
  /** Models API key. Default `SVC_API_KEY`. */
  readonly apiKey?: string | undefined;
  /** Models API base. Default `SVC_BASE_URL`. */
  readonly baseUrl?: string | undefined;
  /** Jobs this worker takes at once. Default: the organization's concurrency. */
  readonly concurrency?: number | undefined;
  /** The organization's concurrent requests per model, shared by the whole fleet (1-25). Default 3. */
  readonly organizationConcurrency?: number | undefined;
  /** Stop once the queue has no waiting, delayed or active job. Default false (run until aborted). */
  readonly untilEmpty?: boolean | undefined;
  /** Aborting stops taking jobs, lets the running ones finish, and resolves. */
  readonly signal?: AbortSignal | undefined;
  /** The batch call's retry policy (by cause, see RetryPolicy). */
  readonly retry?: RetryPolicy | false | undefined;
  /** A shared slot outlives a dead worker by this much, ms. Default 30 000. */
  readonly leaseMs?: number | undefined;
  /** A job outlives a dead worker by this much before another takes it, ms (BullMQ lockDuration). Default 30 000. */
  readonly lockDurationMs?: number | undefined;
  /** How often stalled jobs are looked for, ms (BullMQ stalledInterval). Default 30 000. */
  readonly stalledIntervalMs?: number | undefined;
  /** How long Redis may be unreachable before the worker stops with `redis_unavailable`, ms. Default 15 000. */
  readonly redisDownMs?: number | undefined;
  /** Called about once a second and at the end. */
  readonly onProgress?: ((p: WorkerProgress) => void) | undefined;
  /** Called when a job ends. */
  readonly onJob?: ((o: BatchJobOutcome) => void) | undefined;
}

/** How a worker's run ended. */
export interface WorkerSummary {
  readonly done: number;
  readonly failed: number;
}

/**
 * Run a batch worker: take jobs from the queue, call the job's batch endpoint under the
 * organization's shared limit (one Redis semaphore per organization and model, see
 * `createRedisLimits`), retry by cause as every batch call does, and store the result, or the
 * typed error, as the job's outcome.
 *
 * - A file's own failure (unsupported, refused by the service after the call's retries) fails
 *   the job at once with the typed error as JSON in `failedReason`. A failure of the fleet
 *   (Redis away, a lost slot) fails the attempt: BullMQ tries the job again (`attempts`).
 * - A worker that dies holding jobs (SIGKILL, a lost machine) loses them to the others once
 *   their lock expires (`lockDurationMs`), and its slots once their lease does (`leaseMs`).
 * - When Redis stays unreachable for `redisDownMs`, the worker cancels its uploads and rejects
 *   with `redis_unavailable`; its jobs stay in Redis for the others.
 * - Resolves when `signal` aborts, or, with `untilEmpty`, when no job is left.
 */
export async function runBatchWorker(options: BatchWorkerOptions = {}): Promise<WorkerSummary> {
  const url = resolveRedisUrl(options.url);
  const { apiKey, baseUrl } = modelsCredentials(options);
  const orgConcurrency = options.organizationConcurrency ?? 3;
  // Checked whether given or taken from the organization's.
  const concurrency = positiveInteger('batch worker', 'concurrency', options.concurrency ?? orgConcurrency, orgConcurrency);
  const redisDownMs = options.redisDownMs ?? 15_000;

  // Every package a worker needs, checked before anything connects.
  const needs = ['bullmq', 'ioredis', 'redis-semaphore'];
  await importOptional('bullmq', 'a batch worker', needs, () => import('bullmq'));
  await importOptional('redis-semaphore', 'a batch worker', needs, () => import('redis-semaphore'));
  const client: Redis = await connectRedis(url);
  let limits: RedisLimits | undefined;
  let worker: Worker<BatchJobData> | undefined;
  let queue: BatchQueue | undefined;
  const inFlight = new Set<AbortController>();
  let done = 0;
  let failed = 0;
  let lostRedis = false;
  try {
    limits = await createRedisLimits({ redis: client, concurrency: orgConcurrency, ...(options.leaseMs !== undefined ? { leaseMs: options.leaseMs } : {}) });
    queue = await createBatchQueue(options);
    const { Worker: WorkerCtor, UnrecoverableError } = await bullmq();
    const batch: BatchOptions = { apiKey, baseUrl, limiter: limits, ...(options.retry !== undefined ? { retry: options.retry } : {}) };

    const processor = async (job: Job<BatchJobData>): Promise<unknown> => {
      const controller = new AbortController();
      inFlight.add(controller);
      try {
        const { model } = job.data;
        const file = /^file:\/\//i.test(job.data.file) ? fileURLToPath(job.data.file) : job.data.file;
        const opts = { ...batch, signal: controller.signal };
        return model === 'emotion' ? await lastValueFrom(detectEmotion(file, opts)) : await lastValueFrom(detectAudioEvents(file, opts));
      } catch (err) {
        const stored = storedError(controller.signal.reason instanceof SvcError ? controller.signal.reason : err);
        // The fleet's failures are tried again (by this or another worker); a file's are final.
        if (INFRASTRUCTURE_CODES.has(stored.code)) throw new Error(JSON.stringify(stored));
        throw new UnrecoverableError(JSON.stringify(stored));
      } finally {
        inFlight.delete(controller);
      }
    };

    worker = new WorkerCtor<BatchJobData>(queue.name, processor, {
      connection: connectionOf(url, { maxRetriesPerRequest: null }),
      concurrency,
      lockDuration: options.lockDurationMs ?? 30_000,
      stalledInterval: options.stalledIntervalMs ?? 30_000,
      maxStalledCount: 3,
      // Seconds a worker long-polls an empty queue; short, so --until-empty exits promptly.
      drainDelay: 1,
      ...(options.prefix ? { prefix: options.prefix } : {}),
    });
    worker.on('error', () => undefined);
    worker.on('completed', (job) => {
      done++;
      options.onJob?.(outcomeOf(job, 'completed'));
    });
    worker.on('failed', (job) => {
      if (!job) return;
      const final = job.finishedOn !== undefined || job.attemptsMade >= (job.opts.attempts ?? 1);
      if (!final) return;
      failed++;
      options.onJob?.(outcomeOf(job, 'failed'));
    });

    const started = Date.now();
    let finishedAtStart: number | undefined;
    let downSince: number | undefined;
    const q = queue;
    const w = worker;
    await new Promise<void>((resolve, reject) => {
      let ticking = false;
      const stop = (err?: unknown): void => {
        clearInterval(timer);
        options.signal?.removeEventListener('abort', onAbort);
        if (err) reject(err);
        else resolve();
      };
      const onAbort = (): void => stop();
      options.signal?.addEventListener('abort', onAbort, { once: true });
      if (options.signal?.aborted) return stop();
      const tick = async (): Promise<void> => {
        if (ticking) return;
        ticking = true;
        try {
          let counts: BatchQueueCounts;
          try {
            await client.ping();
            counts = await q.counts();
            downSince = undefined;
          } catch (err) {
            downSince ??= Date.now();
            if (Date.now() - downSince >= redisDownMs) {
              const e = redisError(err, `lost Redis at ${redactRedisUrl(url)} for ${redisDownMs} ms; this worker stops, its jobs stay queued for the others`);
              lostRedis = true;
              for (const c of inFlight) c.abort(e);
              stop(e);
            }
            return;
          }
          const finished = counts.completed + counts.failed;
          finishedAtStart ??= finished;
          const seconds = (Date.now() - started) / 1000;
          const rate = seconds > 0 ? (finished - finishedAtStart) / seconds : 0;
          const left = counts.waiting + counts.active + counts.delayed;
          options.onProgress?.({ done, failed, counts, rate, etaSeconds: rate > 0 ? left / rate : undefined });
          if (options.untilEmpty && left === 0 && w.isRunning()) stop();
        } finally {
          ticking = false;
        }
      };
      const timer = setInterval(() => void tick(), 250);
      void tick();
    });
    return { done, failed };
  } finally {
    // A worker that lost Redis cannot close gracefully: bound every step.
    const bounded = (p: Promise<unknown> | undefined, ms = 3000): Promise<unknown> =>
      Promise.race([Promise.resolve(p).catch(() => undefined), new Promise((r) => setTimeout(r, ms).unref())]);
    await bounded(worker?.close(lostRedis), lostRedis ? 3000 : 600_000);
    await bounded(queue?.close());
    await bounded(limits?.close());
    client.disconnect();
  }
}
