// The retry policy as a table, and its waits on virtual time.
import { describe, expect, it } from 'vitest';
import { defer, throwError, of } from 'rxjs';
import { TestScheduler } from 'rxjs/testing';
import { ApiError, InputError } from 'svc-stream';
import { errorFromHttp } from '../../src/errors/index.js';
import { LIMIT_DETAILS } from 'svc-stream/emulator';
import { retryByCause, retryClassOf, retryDelay, stopsRun } from 'svc-stream/batch';

const http = (status: number, detail: string) => errorFromHttp(status, { detail });

describe('retry policy by cause', () => {
  it.each([
    [http(429, LIMIT_DETAILS.concurrency_limit), 'concurrency', false],
    [http(502, 'Unable to validate request. Please try again.'), 'transient', false],
    [http(503, 'Service temporarily unavailable. Please try again later.'), 'transient', false],
    [http(504, 'The request timed out. Please try again.'), 'transient', false],
    [http(429, LIMIT_DETAILS.monthly_usage_limit), 'never', true],
    [http(429, LIMIT_DETAILS.monthly_credit_limit), 'never', true],
    [http(429, LIMIT_DETAILS.insufficient_credits), 'never', true],
    [http(403, LIMIT_DETAILS.insufficient_credits), 'never', true],
    [http(401, 'Invalid API key.'), 'never', true],
    [http(403, 'Invalid API key.'), 'never', true],
    [http(403, 'This API key does not have access to this model.'), 'never', true],
    [http(400, 'The uploaded file is empty.'), 'never', false],
    [http(500, 'Internal server error'), 'never', false],
    [new InputError('file_too_large', 'x'), 'never', false],
    [new Error('not ours'), 'never', false],
  ])('%s → %s (stops run: %s)', (err, cls, stops) => {
    expect(retryClassOf(err)).toBe(cls);
    expect(stopsRun(err)).toBe(stops);
  });

  it('backs off exponentially with bounded jitter and a bounded count', () => {
    const c = http(429, LIMIT_DETAILS.concurrency_limit);
    const t = http(503, 'Service temporarily unavailable. Please try again later.');
    const top = { random: () => 1 };
    const bottom = { random: () => 0 };
    expect([1, 2, 3].map((n) => retryDelay(c, n, top))).toEqual([2000, 4000, 8000]);
    expect([1, 2, 3].map((n) => retryDelay(c, n, bottom))).toEqual([1000, 2000, 4000]);
    expect(retryDelay(c, 7, top)).toBeUndefined();
    expect([1, 2, 3, 4].map((n) => retryDelay(t, n, top))).toEqual([1000, 2000, 4000, undefined]);
    expect(retryDelay(c, 6, { ...top, maxDelayMs: 5000 })).toBe(5000);
    expect(retryDelay(http(429, LIMIT_DETAILS.monthly_usage_limit), 1, top)).toBeUndefined();
  });

  it('waits on the given scheduler (virtual time)', () => {
    new TestScheduler((a, b) => expect(a).toEqual(b)).run(({ expectObservable, expectSubscriptions, cold }) => {
      let n = 0;
      const c = http(429, LIMIT_DETAILS.concurrency_limit);
      const src = defer(() => (n++ < 2 ? throwError(() => c) : of('ok')));
      const out = src.pipe(retryByCause({ concurrencyDelayMs: 2000, random: () => 1 }, undefined));
      // asyncScheduler is virtual inside run(): waits of 2000 then 4000 ms.
      expectObservable(out).toBe('6000ms (x|)', { x: 'ok' });
      const never = cold('#', undefined, http(429, LIMIT_DETAILS.monthly_usage_limit));
      expectObservable(never.pipe(retryByCause({}, undefined))).toBe('#', undefined, http(429, LIMIT_DETAILS.monthly_usage_limit));
      expectSubscriptions(never.subscriptions).toBe('(^!)');
    });
  });

  it('retry: false turns retries off', () => {
    const c = http(429, LIMIT_DETAILS.concurrency_limit);
    let n = 0;
    let err: unknown;
    defer(() => { n++; return throwError(() => c); }).pipe(retryByCause(false)).subscribe({ error: (e) => (err = e) });
    expect(n).toBe(1);
    expect(err).toBeInstanceOf(ApiError);
  });
});
