// What is known of the orchestration API's replies: loose objects, job states in three sets.
import { describe, expect, it } from 'vitest';
import { JOB_COMPLETED, JOB_FAILED_STATES, JOB_PENDING_STATES, JobStatusSchema, RealtimeSubmissionReplySchema, SubmissionReplySchema } from 'svc-stream/schema';

describe('the job API replies', () => {
  it('a submission reply needs a job id and keeps what it does not know', () => {
    expect(SubmissionReplySchema.parse({ job_id: 'j1', status: 'queued', api_calls_charged: 3, extra: true })).toMatchObject({ job_id: 'j1', extra: true });
    expect(SubmissionReplySchema.safeParse({ job_id: '' }).success).toBe(false);
    expect(SubmissionReplySchema.safeParse({ status: 'queued' }).success).toBe(false);
  });

  it('a job status is loose too', () => {
    expect(JobStatusSchema.safeParse({ job_id: 'j1', status: 'running', progress: 0.5 }).success).toBe(true);
    expect(RealtimeSubmissionReplySchema.safeParse({}).success).toBe(false);
  });

  it('completed, failed and pending states never overlap', () => {
    const failed = new Set(JOB_FAILED_STATES);
    expect(failed.has(JOB_COMPLETED)).toBe(false);
    expect(JOB_PENDING_STATES.filter((s) => failed.has(s) || s === JOB_COMPLETED)).toEqual([]);
  });
});
