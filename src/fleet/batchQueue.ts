// A batch run spread over many machines: files go into a BullMQ queue in Redis, workers take
// them, call the batch endpoint under the fleet's shared limit, and store each outcome.
import { fileURLToPath } from 'node:url';
import { lastValueFrom } from 'rxjs';
import type { Job, Queue, Worker } from 'bullmq';
import type { Redis } from 'ioredis';
import { detectAudioEvents, detectEmotion } from '../batch/calls.js';
import type { BatchOptions } from '../batch/request.js';
import type { RetryPolicy } from '../batch/retry.js';
import { InputError, SvcError } from '../errors.js';
import { modelsCredentials } from '../credentials.js';
import { importOptional } from '../internal/optionalPackage.js';
import { connectRedis, createRedisLimits, redactRedisUrl, redisError, resolveRedisUrl, type RedisLimits } from './redisLimiter.js';

/** The models a queue job can ask for. */
export const QUEUE_MODELS = ['audio-event', 'emotion'] as const;
/** A model a queue job can ask for: `audio-event` (audio event detection) or `emotion`. */
export type QueueModel = (typeof QUEUE_MODELS)[number];

/** What one job carries: the file (a path, or a `file://` URL, every worker can read) and the model. */
export interface BatchJobData {
  readonly file: string;
  readonly model: QueueModel;
}

/** A typed error as stored in Redis. */
export interface StoredError {
  readonly code: string;
  readonly message: string;
  readonly status?: number | undefined;
  readonly detail?: unknown;
  readonly retryable: boolean;
}

/** One file's outcome as `queue results` prints it. */
export type BatchJobOutcome =
  | { readonly file: string; readonly model: QueueModel; readonly status: 'done'; readonly result: unknown }
  | { readonly file: string; readonly model: QueueModel; readonly status: 'failed'; readonly error: StoredError }
  | { readonly file: string; readonly model: QueueModel; readonly status: 'waiting' | 'active' | 'delayed' };

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

function connectionOf(url: string, extra: Record<string, unknown> = {}): { url: string } & Record<string, unknown> {
  // BullMQ opens its own ioredis connections from this; the worker's must wait out reconnects.
  return { url, ...extra };
}

async function bullmq(): Promise<typeof import('bullmq')> {
  return importOptional('bullmq', 'the batch queue', ['bullmq', 'ioredis'], () => import('bullmq'));
}

function storedError(err: unknown): StoredError {
  if (err instanceof SvcError) return { code: err.code, message: err.message, status: err.status, detail: err.detail, retryable: err.retryable };
  return { code: 'internal_error', message: (err as Error)?.message ?? String(err), retryable: false };
}

function parseStored(reason: string | undefined): StoredError {
  try {
    const v = JSON.parse(reason ?? '') as StoredError;
    if (typeof v?.code === 'string') return v;
  } catch {
    // not ours: a BullMQ failure such as a job stalled too often
  }
  return { code: 'internal_error', message: reason ?? 'unknown failure', retryable: false };
}

function outcomeOf(job: Job<BatchJobData>, state: string): BatchJobOutcome {
  const base = { file: job.data.file, model: job.data.model };
  if (state === 'completed') return { ...base, status: 'done', result: job.returnvalue };
  if (state === 'failed') return { ...base, status: 'failed', error: parseStored(job.failedReason) };
  return { ...base, status: state === 'active' ? 'active' : state === 'delayed' ? 'delayed' : 'waiting' };
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

const INFRASTRUCTURE: ReadonlySet<string> = new Set(['redis_unavailable', 'lease_lost', 'slot_timeout', 'aborted']);

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
  const concurrency = options.concurrency ?? orgConcurrency;
  if (!Number.isInteger(concurrency) || concurrency < 1) throw new InputError('invalid_argument', `concurrency must be a positive integer, got ${concurrency}`, { path: 'concurrency' });
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
        if (INFRASTRUCTURE.has(stored.code)) throw new Error(JSON.stringify(stored));
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
