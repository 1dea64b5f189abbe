// The orchestration API's job book for the emulator: how jobs are created, receive files,
// are finalized, and which state they are in at a given time. No I/O and no timers.
import { randomUUID } from 'node:crypto';
import { SINGLE_FILE_MAX_BYTES } from '../schema/limits.js';

/**
 * Job states the emulator reports. Only `completed` is contract (§3); the others are the
 * emulator's assumption, chosen to look like a queue: `uploading` (multi-file, not finalized),
 * `ready` (real time: the job waits for a stream), `queued`, `processing`, `failed`.
 */
export type EmulatedJobStatus = 'uploading' | 'ready' | 'queued' | 'processing' | 'completed' | 'failed';

/** What happens to a job once it is finalized. `never` keeps it `processing` forever. */
export type JobOutcome = 'completed' | 'failed' | 'never';

export interface EmulatedJobFlags {
  readonly emotion_annotation: boolean;
  readonly demographics: boolean;
}

/** One received file, already decoded by ffmpeg. */
export interface JobFile {
  readonly filename: string;
  readonly fileExtension: string;
  readonly bytes: number;
  readonly durationMs: number;
  /** Milliseconds of non-quiet audio, measured at upload (the samples are not kept). */
  readonly speechMs: number;
}

export interface EmulatedJob {
  readonly jobId: string;
  readonly submissionType: 'batch' | 'realtime_websocket';
  readonly createdAt: number;
  readonly files: JobFile[];
  flags: EmulatedJobFlags;
  finalizedAt: number | undefined;
  /** Poll requests answered so far for this job (1-based count after the increment). */
  polls: number;
  outcome: JobOutcome;
}

/**
 * How the emulator's orchestration API behaves. Fast by default so tests are quick; the
 * fault fields script what tests need (a job that never completes, a failed job, a 503).
 */
export interface PlatformBehavior {
  /** Milliseconds from finalize to `processing`. Default 30. */
  readonly queuedMs?: number | undefined;
  /** Milliseconds in `processing` before the outcome. Default 120. */
  readonly processingMs?: number | undefined;
  /** The outcome of every job, or chosen per job at finalize. Default `completed`. */
  readonly outcome?: (JobOutcome | ((job: { readonly jobId: string; readonly filenames: readonly string[] }) => JobOutcome)) | undefined;
  /** The `error` text of a failed job. */
  readonly failureDetail?: string | undefined;
  /** 1-based poll numbers (per job) answered with a transient error instead of the status. */
  readonly transientPolls?: readonly number[] | undefined;
  /** Status of those transient answers: 502, 503 (default) or 504. */
  readonly transientStatus?: number | undefined;
  /** Largest decoded single-file upload, in bytes. Default 5 000 000 (§8: 5 MB). */
  readonly maxSingleFileBytes?: number | undefined;
  /** Largest decoded multi-file upload, in bytes (not shown by the contract). Default 100 000 000 bytes. */
  readonly maxMultiFileBytes?: number | undefined;
  /** The clock. Default `Date.now`. */
  readonly now?: (() => number) | undefined;
}

export const DEFAULT_QUEUED_MS = 30;
export const DEFAULT_PROCESSING_MS = 120;
/** §8 says 5 MB; one number for the client and the emulator (see schema/limits.ts). */
export { SINGLE_FILE_MAX_BYTES };
/** Not shown by the contract: the emulator's assumption, read decimally like every limit. */
export const MULTI_FILE_MAX_BYTES = 100_000_000;
export const FAILURE_DETAIL = 'Processing failed: the emulator was scripted to fail this job.';

/** The job's state at `now`: a pure function of its record and the behavior's timings. */
export function jobStatusAt(job: EmulatedJob, now: number, behavior: PlatformBehavior): EmulatedJobStatus {
  if (job.submissionType === 'realtime_websocket') return 'ready';
  if (job.finalizedAt === undefined) return 'uploading';
  const elapsed = now - job.finalizedAt;
  const queuedMs = behavior.queuedMs ?? DEFAULT_QUEUED_MS;
  const processingMs = behavior.processingMs ?? DEFAULT_PROCESSING_MS;
  if (elapsed < queuedMs) return 'queued';
  if (elapsed < queuedMs + processingMs || job.outcome === 'never') return 'processing';
  return job.outcome;
}

/** The jobs of one running emulator. */
export class JobBook {
  readonly #jobs = new Map<string, EmulatedJob>();
  constructor(readonly behavior: PlatformBehavior) {}

  now(): number {
    return (this.behavior.now ?? Date.now)();
  }

  create(submissionType: EmulatedJob['submissionType'], flags: EmulatedJobFlags): EmulatedJob {
    const job: EmulatedJob = {
      jobId: randomUUID(),
      submissionType,
      createdAt: this.now(),
      files: [],
      flags,
      finalizedAt: undefined,
      polls: 0,
      outcome: 'completed',
    };
    this.#jobs.set(job.jobId, job);
    return job;
  }

  get(jobId: string): EmulatedJob | undefined {
    return this.#jobs.get(jobId);
  }

  finalize(job: EmulatedJob): void {
    job.finalizedAt = this.now();
    const o = this.behavior.outcome ?? 'completed';
    job.outcome = typeof o === 'function' ? o({ jobId: job.jobId, filenames: job.files.map((f) => f.filename) }) : o;
  }

  /** Estimated seconds from finalize to the outcome. */
  estimatedSeconds(): number {
    return ((this.behavior.queuedMs ?? DEFAULT_QUEUED_MS) + (this.behavior.processingMs ?? DEFAULT_PROCESSING_MS)) / 1000;
  }
}
