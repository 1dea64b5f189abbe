// 'svc-stream/fleet': scaling past one machine — concurrency limits shared through Redis
// (ioredis and redis-semaphore load on first use) and a BullMQ queue of batch jobs.
/// <reference types="node" preserve="true" />

export { createRedisLimits, type RedisLimits, type RedisLimiter, type RedisLimitsOptions } from './redisLimiter.js';
export {
  createBatchQueue,
  runBatchWorker,
  QUEUE_MODELS,
  type QueueModel,
  type BatchJobData,
  type BatchJobOutcome,
  type BatchQueue,
  type BatchQueueCounts,
  type BatchQueueOptions,
  type AddOptions as BatchQueueAddOptions,
  type StoredError,
  type WorkerProgress,
  type BatchWorkerOptions,
  type WorkerSummary,
} from './batchQueue.js';
