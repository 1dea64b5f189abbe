// Orchestration failures that are not a single HTTP answer: a job that ended badly or did
// not end in time, and one upload of a multi-file job. Both stay in the one SvcError hierarchy.
import { ApiError, maskSecrets, SvcError, type ErrorCode, type SvcErrorOptions } from '../errors/index.js';
import type { JobStatus } from '../schema/platform.js';

/** A polled job that failed, reached a state not known to be pending, or missed the deadline. */
export class JobError extends SvcError {
  override readonly name: string = 'JobError';
  readonly jobId: string;
  /** The last status record seen, if any. */
  readonly job: JobStatus | undefined;
  constructor(code: ErrorCode, message: string, options: SvcErrorOptions & { jobId: string; job?: JobStatus | undefined }) {
    super(code, message, options);
    this.jobId = options.jobId;
    this.job = maskSecrets(options.job, options);
  }
}

/**
 * One upload of a multi-file submission failed. The code, status and detail are the
 * underlying failure's; the message names the file and its index. Nothing was finalized.
 */
export class JobUploadError extends ApiError {
  override readonly name: string = 'JobUploadError';
  /** Zero-based index of the file that failed. */
  readonly fileIndex: number;
  readonly filename: string;
  /** The job the earlier files went to; undefined when the first upload failed. */
  readonly jobId: string | undefined;
  /** How many files were accepted before the failure. */
  readonly uploaded: number;
  constructor(cause: unknown, info: { fileIndex: number; fileCount: number; filename: string; jobId: string | undefined }) {
    const svc = cause instanceof SvcError ? cause : undefined;
    const why = cause instanceof Error ? cause.message : String(cause);
    const where = info.jobId === undefined ? 'creating the job' : `job ${info.jobId}`;
    super(
      svc?.code ?? 'source_error',
      `upload ${info.fileIndex + 1} of ${info.fileCount} (index ${info.fileIndex}, "${info.filename}") failed (${where}); ${info.fileIndex} earlier file(s) uploaded, job not finalized: ${why}`,
      {
        status: svc?.status,
        detail: svc?.detail,
        retryable: svc?.retryable ?? false,
        cause,
        body: cause instanceof ApiError ? cause.body : undefined,
        ...(cause instanceof ApiError && cause.validationErrors ? { validationErrors: cause.validationErrors } : {}),
      },
    );
    this.fileIndex = info.fileIndex;
    this.filename = info.filename;
    this.jobId = info.jobId;
    this.uploaded = info.fileIndex;
  }
}
