// The job API's own failures, in the one SvcError hierarchy: a job that ended badly, and one
// upload of a multi-file submission.
import { describe, expect, it } from 'vitest';
import { ApiError, SvcError } from 'svc-stream';
import { JobError, JobUploadError } from 'svc-stream/platform';

describe('JobError', () => {
  it('carries the job id and its last status, masked of secrets', () => {
    const e = new JobError('job_failed', 'job j1 failed', { jobId: 'j1', job: { job_id: 'j1', status: 'failed', note: 'key sk-secret' }, secrets: ['sk-secret'] });
    expect(e).toBeInstanceOf(SvcError);
    expect(e).toMatchObject({ name: 'JobError', code: 'job_failed', jobId: 'j1' });
    expect(JSON.stringify(e.job)).not.toContain('sk-secret');
  });
});

describe('JobUploadError', () => {
  it("takes the failed upload's code, status and detail, and names the file and what was uploaded", () => {
    const cause = new ApiError('internal_error', 'HTTP 500', { status: 500, detail: 'boom', retryable: true, body: { detail: 'boom' } });
    const e = new JobUploadError(cause, { fileIndex: 2, fileCount: 3, filename: 'c.wav', jobId: 'j9' });
    expect(e).toBeInstanceOf(ApiError);
    expect(e).toMatchObject({ name: 'JobUploadError', code: 'internal_error', status: 500, detail: 'boom', retryable: true, fileIndex: 2, filename: 'c.wav', jobId: 'j9', uploaded: 2, body: { detail: 'boom' } });
    expect(e.message).toBe('upload 3 of 3 (index 2, "c.wav") failed (job j9); 2 earlier file(s) uploaded, job not finalized: HTTP 500');
    expect(e.cause).toBe(cause);
  });

  it('a failure that is not an SvcError is source_error, not retryable; the first upload names no job', () => {
    const e = new JobUploadError(new Error('disk'), { fileIndex: 0, fileCount: 2, filename: 'a.wav', jobId: undefined });
    expect(e).toMatchObject({ code: 'source_error', retryable: false, uploaded: 0, jobId: undefined });
    expect(e.message).toContain('(creating the job)');
  });
});
