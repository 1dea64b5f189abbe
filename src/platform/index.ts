// 'svc-stream/platform': the job API (§5) — submitting files, polling jobs to a terminal
// state, job errors — and the polling helper it is built on. The job schemas are in
// 'svc-stream/schema'.
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
export type { JobFlags, SubmissionReply, RealtimeSubmissionReply, JobStatus } from '../schema/platform.js';
