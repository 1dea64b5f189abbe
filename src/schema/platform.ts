// What is known of the orchestration API's wire shapes (§2.6, wire reference). The contract
// is early access and shows no full schema, so every object keeps unknown fields.
import { z } from 'zod';

/** Analysis switches of a submission, as seen publicly; unknown flags pass through. */
export const JobFlagsSchema = z.looseObject({
  emotion_annotation: z.boolean().optional(),
  demographics: z.boolean().optional(),
});
/** The analysis switches of an orchestration job submission (`emotion_annotation`, `demographics`, §1, §4.5). */
export type JobFlags = z.infer<typeof JobFlagsSchema>;

/**
 * The reply to `POST /api_service`. `job_id` is the only field the client relies on; the
 * types of `api_calls_charged` and `estimated_processing_time` are not shown, so they are kept as sent.
 */
export const SubmissionReplySchema = z.looseObject({
  job_id: z.string().min(1),
  status: z.string().optional(),
  api_calls_charged: z.unknown().optional(),
  estimated_processing_time: z.unknown().optional(),
});
/** The reply to `POST /api_service` (§4.5): `job_id`, and `status` and charges when sent. */
export type SubmissionReply = z.infer<typeof SubmissionReplySchema>;

/** The reply to a real-time submission: it must carry `realtime_url` (§4.5 a). */
export const RealtimeSubmissionReplySchema = z.looseObject({
  ...SubmissionReplySchema.shape,
  realtime_url: z.string().min(1),
});
/** The reply to a real-time submission (§4.5 a): a {@link SubmissionReply} with the `realtime_url` to stream to. */
export type RealtimeSubmissionReply = z.infer<typeof RealtimeSubmissionReplySchema>;

/** The reply to `GET /api_service/job_status/{job_id}`; results ride along when `completed`. */
export const JobStatusSchema = z.looseObject({
  job_id: z.string().optional(),
  status: z.string().min(1),
});
/** A job record from `GET /api_service/job_status/{job_id}` (§4.5); `status` is `completed` when results are in, extra fields kept. */
export type JobStatus = z.infer<typeof JobStatusSchema>;

/** The one state the contract shows (§3), matched exactly: `Completed` is not it. */
export const JOB_COMPLETED = 'completed';

/**
 * Failure-sounding names, NOT used by default: the contract shows no failure state, so
 * `pollJob` keeps polling any status but `completed` until its deadline. A caller who knows
 * its service ends jobs with these names passes `failedStates: JOB_FAILED_STATES` (matched
 * exactly, like every status).
 */
export const JOB_FAILED_STATES: readonly string[] = ['failed', 'failure', 'error', 'errored', 'cancelled', 'canceled', 'aborted', 'rejected', 'expired', 'timed_out', 'timeout'];

/**
 * Names taken to mean the job is still on its way (the emulator's among them). Not shown by
 * the contract: consulted only with `onUnknownState: 'error'`, to tell a pending job from
 * an unknown status.
 */
export const JOB_PENDING_STATES: readonly string[] = ['uploading', 'submitted', 'pending', 'queued', 'waiting', 'scheduled', 'started', 'running', 'processing', 'in_progress', 'ready'];
