// 'svc-stream/fleet': scaling past one machine — concurrency limits shared through Redis
// (ioredis and redis-semaphore load on first use), a BullMQ queue of batch jobs, and live
// sessions published to Redis Streams for relays anywhere in the fleet (docs/fleet.md).
/// <reference types="node" preserve="true" />

export { createRedisLimits, type RedisLimits, type RedisLimiter, type RedisLimitsOptions } from './redisLimiter.js';
export {
  createBatchQueue,
  type BatchQueue,
  type BatchQueueCounts,
  type BatchQueueOptions,
  type AddOptions as BatchQueueAddOptions,
} from './batchQueue.js';
export { QUEUE_MODELS, type QueueModel, type BatchJobData, type BatchJobOutcome, type StoredError } from './batchJobs.js';
export { runBatchWorker, type WorkerProgress, type BatchWorkerOptions, type WorkerSummary } from './batchWorker.js';
export { createPublisher, type PublisherOptions } from './publisher.js';
export type { Publisher, PublishOptions, PublishStats, PublishReport, SessionPublisher } from '../publishing.js';
export type { ResultLabel } from '../schema/resultLabel.js';
export { publishSession, type PublishSessionOptions } from './publishSession.js';
