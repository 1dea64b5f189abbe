// A batch job's outcome and stored error, without Redis: a typed error stored and read back,
// a BullMQ failure of its own read as internal_error, each state's outcome.
import type { Job } from 'bullmq';
import { describe, expect, it } from 'vitest';
import { SvcError } from '../../src/errors/index.js';
import { INFRASTRUCTURE_CODES, outcomeOf, parseStored, storedError, type BatchJobData } from '../../src/fleet/batchJobs.js';

const job = (extra: Partial<Job<BatchJobData>>) => ({ data: { file: 'a.wav', model: 'emotion' }, ...extra }) as Job<BatchJobData>;

describe('batchJobs', () => {
  it('a typed error is stored with its code, status and retryability, and read back as it was', () => {
    const stored = storedError(new SvcError('rate_limited', 'slow down', { status: 429, retryable: true }));
    expect(stored).toMatchObject({ code: 'rate_limited', message: 'slow down', status: 429, retryable: true });
    expect(parseStored(JSON.stringify(stored))).toEqual(stored);
    expect(storedError(new Error('boom'))).toEqual({ code: 'internal_error', message: 'boom', retryable: false });
    expect(parseStored('job stalled more than allowable limit')).toEqual({ code: 'internal_error', message: 'job stalled more than allowable limit', retryable: false });
    expect(INFRASTRUCTURE_CODES.has('redis_unavailable')).toBe(true);
    expect(INFRASTRUCTURE_CODES.has('rate_limited')).toBe(false);
  });

  it('each state has its outcome', () => {
    expect(outcomeOf(job({ returnvalue: { ok: 1 } }), 'completed')).toEqual({ file: 'a.wav', model: 'emotion', status: 'done', result: { ok: 1 } });
    expect(outcomeOf(job({ failedReason: '{"code":"not_found","message":"x","retryable":false}' }), 'failed')).toMatchObject({ status: 'failed', error: { code: 'not_found' } });
    expect(['active', 'delayed', 'waiting', 'prioritized'].map((s) => outcomeOf(job({}), s).status)).toEqual(['active', 'delayed', 'waiting', 'waiting']);
  });
});
