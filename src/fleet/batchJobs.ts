// What a batch job is in Redis, for the queue and its workers alike: the job's data (a file and
// a model), its outcome as `queue results` prints it, and a typed error stored as JSON in
// BullMQ's failedReason and read back. Pure: tested without Redis.
import type { Job } from 'bullmq';
import { SvcError } from '../errors/index.js';

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

/** Codes of the fleet's own failures (Redis, slots, an abort): the job is tried again, where a file's failure is final. */
export const INFRASTRUCTURE_CODES: ReadonlySet<string> = new Set(['redis_unavailable', 'lease_lost', 'slot_timeout', 'aborted']);

/** The error as stored with the job. */
export function storedError(err: unknown): StoredError {
  if (err instanceof SvcError) return { code: err.code, message: err.message, status: err.status, detail: err.detail, retryable: err.retryable };
  return { code: 'internal_error', message: (err as Error)?.message ?? String(err), retryable: false };
}

/** A job's `failedReason` read back (a BullMQ failure of its own becomes `internal_error`). */
export function parseStored(reason: string | undefined): StoredError {
  try {
    const v = JSON.parse(reason ?? '') as StoredError;
    if (typeof v?.code === 'string') return v;
  } catch {
    // not ours: a BullMQ failure such as a job stalled too often
  }
  return { code: 'internal_error', message: reason ?? 'unknown failure', retryable: false };
}

/** A job's outcome in `state`. */
export function outcomeOf(job: Job<BatchJobData>, state: string): BatchJobOutcome {
  const base = { file: job.data.file, model: job.data.model };
  if (state === 'completed') return { ...base, status: 'done', result: job.returnvalue };
  if (state === 'failed') return { ...base, status: 'failed', error: parseStored(job.failedReason) };
  return { ...base, status: state === 'active' ? 'active' : state === 'delayed' ? 'delayed' : 'waiting' };
}
