// The orchestration API client (§4.5): submission of real-time, single-file and multi-file
// jobs, and job polling.
export { PlatformClient, isTransientPollError, type PlatformClientOptions, type SubmitOptions, type MultiFileSubmission, type PollJobOptions } from './PlatformClient.js';
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
