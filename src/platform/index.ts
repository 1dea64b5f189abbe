// 'svc-stream/platform': the job API (§5) — submitting files, polling jobs to a terminal
// state, job errors and schemas — and the polling helper it is built on.
/// <reference types="node" preserve="true" />

export {
  PlatformClient,
  isTransientPollError,
  type PlatformClientOptions,
  type SubmitOptions,
  type PlatformCallOptions,
  type MultiFileSubmission,
  type PollJobOptions,
} from './PlatformClient.js';
export { poll, pollDelay, DEFAULT_POLL_OPTIONS, type PollOptions, type PollSpec, type PollVerdict } from './poll.js';
export { JobError, JobUploadError } from './errors.js';
export { SINGLE_FILE_MAX_BYTES, SUBMISSION_EXTENSIONS, type AudioFileInput } from './files.js';
export {
  JobFlagsSchema,
  SubmissionReplySchema,
  RealtimeSubmissionReplySchema,
  JobStatusSchema,
  JOB_COMPLETED,
  JOB_FAILED_STATES,
  JOB_PENDING_STATES,
  type JobFlags,
  type SubmissionReply,
  type RealtimeSubmissionReply,
  type JobStatus,
} from './schema.js';
