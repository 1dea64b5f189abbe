// The process-wide semaphores of the batch calls: one per model, base URL and key; a source
// of shared limits (a fleet's) takes their place.
import { describe, expect, it } from 'vitest';
import { InputError, Semaphore } from 'svc-stream';
import { batchLimiter } from 'svc-stream/batch';
import { slotsFor } from '../../src/batch/batchLimiter.js';

describe('batchLimiter', () => {
  it('is shared per model, base URL and key; the limit is 1..25, the last one set wins', () => {
    const t = { model: 'emotion', baseUrl: 'http://shared.test', apiKey: 'a' };
    expect(batchLimiter(t)).toBe(batchLimiter({ ...t, baseUrl: 'http://shared.test/' }));
    expect(batchLimiter(t)).not.toBe(batchLimiter({ ...t, apiKey: 'b' }));
    expect(batchLimiter(t)).not.toBe(batchLimiter({ ...t, model: 'audio-event' }));
    expect(batchLimiter(t).limit).toBe(3);
    expect(batchLimiter(t, 25).limit).toBe(25);
    expect(batchLimiter(t).limit).toBe(25);
    expect(() => batchLimiter(t, 26)).toThrow(/1 to 25/);
    expect(() => batchLimiter(t, 0)).toThrow(InputError);
  });
});

describe('slotsFor', () => {
  it("is the source's limiter for the target when there is a source, else the process-wide semaphore", () => {
    const t = { model: 'stt', baseUrl: 'http://slots.test', apiKey: 'k' };
    const shared = new Semaphore(7);
    const asked: unknown[] = [];
    expect(slotsFor({ limiterFor: (target) => { asked.push(target); return shared; } }, t)).toBe(shared);
    expect(asked).toEqual([t]);
    expect(slotsFor(undefined, t, 4)).toBe(batchLimiter(t));
    expect(batchLimiter(t).limit).toBe(4);
  });
});
