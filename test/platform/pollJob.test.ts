// pollJob: against the emulator for the real outcomes (completed, never, 503, failed,
// cancelled), and on virtual or fake time for the schedule and the teardown.
import { lastValueFrom, toArray, VirtualTimeScheduler } from 'rxjs';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { ApiError, SvcError } from '../../src/errors/index.js';
import { JOB_FAILED_STATES } from 'svc-stream/schema';
import { JobError, PlatformClient, pollDelay, type JobStatus } from 'svc-stream/platform';
import { harness, manualClock, scriptedFetch, settle, type Harness } from './helpers.js';

const CALL = new URL('../../samples/call.wav', import.meta.url).pathname;
const fast = { intervalMs: 10, maxIntervalMs: 40 };

let h: Harness | undefined;
afterEach(async () => {
  vi.useRealTimers();
  await h?.emu.close();
  h = undefined;
});
const polls = (x: Harness) => x.requests.filter((l) => l.startsWith('GET /platform/api_service/job_status/')).length;
const timeouts = () => process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;

describe('pollJob against the emulator', () => {
  it('emits each status once, in order, and completes with the completed record', async () => {
    const clock = manualClock();
    h = await harness({ queuedMs: 40, processingMs: 80, now: clock.now });
    const client = h.client({ fetch: clock.ticking(30) });
    const { job_id } = await client.submitFile(CALL);
    const seen = await lastValueFrom(client.pollJob(job_id, fast).pipe(toArray()));
    expect(seen.map((s) => s.status)).toEqual(['queued', 'processing', 'completed']);
    expect(seen.at(-1)!['results']).toBeDefined();
    expect(polls(h)).toBe(4); // +30 ms each: queued, processing, processing, completed
  });

  it('errors with poll_deadline for a job that never completes', async () => {
    h = await harness({ queuedMs: 0, processingMs: 0, outcome: 'never' });
    const client = h.client();
    const { job_id } = await client.submitFile(CALL);
    const seen: string[] = [];
    const err = await new Promise<unknown>((resolve) => client.pollJob(job_id, { ...fast, deadlineMs: 300 }).subscribe({ next: (j) => seen.push(j.status), error: resolve, complete: () => resolve('completed') }));
    expect(err).toBeInstanceOf(JobError);
    expect(err).toMatchObject({ code: 'poll_deadline', jobId: job_id, retryable: true, job: { status: 'processing' } });
    expect(seen).toEqual(['processing']);
  });

  it('recovers from a transient 503 during polling', async () => {
    const clock = manualClock();
    h = await harness({ queuedMs: 0, processingMs: 60, transientPolls: [2, 3], now: clock.now });
    const client = h.client({ fetch: clock.ticking(10) });
    const { job_id } = await client.submitFile(CALL);
    const last = await lastValueFrom(client.pollJob(job_id, fast));
    expect(last.status).toBe('completed');
    expect(polls(h)).toBeGreaterThanOrEqual(4); // two of them were the scripted 503s
  });

  it('gives up after more consecutive transient errors than allowed', async () => {
    h = await harness({ queuedMs: 0, processingMs: 0, transientPolls: [1, 2, 3, 4], transientStatus: 504 });
    const client = h.client();
    const { job_id } = await client.submitFile(CALL);
    const err = await lastValueFrom(client.pollJob(job_id, { ...fast, maxConsecutiveTransientErrors: 2 })).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApiError);
    expect(err).toMatchObject({ code: 'timeout', status: 504, retryable: true });
    expect((err as Error).message).toMatch(/gave up after 3 transient failures/);
    expect(polls(h)).toBe(3);
  });

  it('keeps polling an out-of-contract `failed` status until the deadline, reporting it', async () => {
    h = await harness({ queuedMs: 0, processingMs: 0, outcome: 'failed', failureDetail: 'decoder exploded' });
    const client = h.client();
    const { job_id } = await client.submitFile(CALL);
    const seen: JobStatus[] = [];
    const err = await new Promise<unknown>((resolve) => client.pollJob(job_id, { ...fast, deadlineMs: 200 }).subscribe({ next: (j) => seen.push(j), error: resolve }));
    expect(seen.map((s) => s.status)).toEqual(['failed']);
    expect(err).toMatchObject({ name: 'JobError', code: 'poll_deadline', job: { status: 'failed' } });
    expect((err as Error).message).toContain('last status "failed"');
    expect(polls(h)).toBeGreaterThan(1);
  });

  it('with failedStates, emits the failed status, then errors with job_failed and the job\'s error text', async () => {
    h = await harness({ queuedMs: 0, processingMs: 0, outcome: 'failed', failureDetail: 'decoder exploded' });
    const client = h.client();
    const { job_id } = await client.submitFile(CALL);
    const seen: JobStatus[] = [];
    const err = await new Promise<unknown>((resolve) => client.pollJob(job_id, { ...fast, failedStates: JOB_FAILED_STATES }).subscribe({ next: (j) => seen.push(j), error: resolve }));
    expect(seen.map((s) => s.status)).toEqual(['failed']);
    expect(err).toMatchObject({ name: 'JobError', code: 'job_failed', detail: 'decoder exploded', retryable: false });
    expect((err as Error).message).toContain('decoder exploded');
  });

  it('fails at once on a non-transient answer (unknown job → 404 not_found)', async () => {
    h = await harness();
    const err = await lastValueFrom(h.client().pollJob('no-such-job', fast)).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'not_found', status: 404 });
    expect(polls(h)).toBe(1);
  });

  it('stops polling on unsubscribe and leaves no timer behind', async () => {
    h = await harness({ queuedMs: 0, processingMs: 0, outcome: 'never' });
    const client = h.client();
    const { job_id } = await client.submitFile(CALL);
    const before = timeouts();
    await new Promise<void>((resolve) => {
      const sub = client.pollJob(job_id, { intervalMs: 20, deadlineMs: 60_000 }).subscribe(() => {
        setImmediate(() => {
          sub.unsubscribe();
          resolve();
        });
      });
    });
    expect(timeouts()).toBeLessThanOrEqual(before); // others (keep-alive sockets) may expire meanwhile
    const count = polls(h);
    await new Promise((r) => setTimeout(r, 100));
    expect(polls(h)).toBe(count);
  });

  it('ends with an aborted error when the AbortSignal fires', async () => {
    h = await harness({ queuedMs: 0, processingMs: 0, outcome: 'never' });
    const client = h.client();
    const { job_id } = await client.submitFile(CALL);
    const ac = new AbortController();
    const before = timeouts();
    const p = lastValueFrom(client.pollJob(job_id, { ...fast, signal: ac.signal })).catch((e: unknown) => e);
    setTimeout(() => ac.abort(), 50);
    const err = await p;
    expect(err).toMatchObject({ code: 'aborted' });
    expect(timeouts()).toBeLessThanOrEqual(before); // others (keep-alive sockets) may expire meanwhile
  });
});

describe('pollJob on controlled time', () => {
  const processing = { status: 200, body: { job_id: 'j', status: 'processing' } };
  const client = (f: typeof fetch) => new PlatformClient({ baseUrl: 'http://svc.invalid/platform', accountUuid: 'a', apiKey: 'k', env: {}, fetch: f });

  it('waits with capped exponential backoff, on the given scheduler', async () => {
    const scheduler = new VirtualTimeScheduler();
    const { fetch, calls } = scriptedFetch([processing]);
    const at: number[] = [];
    const wrapped = ((...a: Parameters<typeof fetch>) => {
      at.push(scheduler.now());
      return fetch(...a);
    }) as typeof fetch;
    const opts = { intervalMs: 100, backoff: 2, maxIntervalMs: 300, deadlineMs: 1000, scheduler };
    let error: unknown;
    const sub = client(wrapped).pollJob('j', opts).subscribe({ error: (e: unknown) => (error = e) });
    for (let t = 0; t <= 1000 && !error; t += 10) {
      await settle();
      scheduler.maxFrames = t;
      scheduler.flush();
    }
    sub.unsubscribe();
    expect(at).toEqual([0, 100, 300, 600, 900]);
    expect([0, 1, 2, 3].map((n) => pollDelay(n, opts))).toEqual([100, 200, 300, 300]);
    expect(calls[0]).toBe('http://svc.invalid/platform/api_service/job_status/j');
    expect(error).toMatchObject({ code: 'poll_deadline' });
    expect(scheduler.actions).toHaveLength(0);
  });

  it('counts network failures as transient and resets the count on a success', async () => {
    const scheduler = new VirtualTimeScheduler();
    const done = { status: 200, body: { job_id: 'j', status: 'completed', results: {} } };
    const { fetch, calls } = scriptedFetch(['network', 'network', processing, 'network', { status: 502, body: { detail: 'Unable to validate request. Please try again.' } }, done]);
    const out: string[] = [];
    let end: unknown;
    client(fetch).pollJob('j', { intervalMs: 10, backoff: 1, maxConsecutiveTransientErrors: 2, scheduler }).subscribe({ next: (j) => out.push(j.status), error: (e: unknown) => (end = e), complete: () => (end = 'complete') });
    for (let t = 0; t <= 200 && end === undefined; t += 5) {
      await settle();
      scheduler.maxFrames = t;
      scheduler.flush();
    }
    expect(end).toBe('complete');
    expect(out).toEqual(['processing', 'completed']);
    expect(calls).toHaveLength(6);
    expect(scheduler.actions).toHaveLength(0);
  });

  it('ends only on exactly `completed`: invented failures and other casings are reported and polled through', async () => {
    const scheduler = new VirtualTimeScheduler();
    const statuses = ['failed', 'error', 'cancelled', 'Completed', 'COMPLETED', 'completed'];
    const { fetch, calls } = scriptedFetch(statuses.map((status) => ({ status: 200, body: { job_id: 'j', status } })));
    const out: string[] = [];
    let end: unknown;
    client(fetch).pollJob('j', { intervalMs: 10, backoff: 1, scheduler }).subscribe({ next: (j) => out.push(j.status), error: (e: unknown) => (end = e), complete: () => (end = 'complete') });
    for (let t = 0; t <= 200 && end === undefined; t += 5) {
      await settle();
      scheduler.maxFrames = t;
      scheduler.flush();
    }
    expect(end).toBe('complete');
    expect(out).toEqual(statuses);
    expect(calls).toHaveLength(statuses.length);
  });

  it('failedStates and pendingStates match exactly', async () => {
    const run = async (status: string, opts: object): Promise<unknown> => {
      const scheduler = new VirtualTimeScheduler();
      const { fetch } = scriptedFetch([{ status: 200, body: { job_id: 'j', status } }]);
      let end: unknown;
      const sub = client(fetch).pollJob('j', { intervalMs: 10, deadlineMs: 100, scheduler, ...opts }).subscribe({ error: (e: unknown) => (end = e) });
      for (let t = 0; t <= 200 && end === undefined; t += 5) {
        await settle();
        scheduler.maxFrames = t;
        scheduler.flush();
      }
      sub.unsubscribe();
      return end;
    };
    expect(await run('failed', { failedStates: ['failed'] })).toMatchObject({ code: 'job_failed' });
    expect(await run('FAILED', { failedStates: ['failed'] })).toMatchObject({ code: 'poll_deadline' });
    expect(await run('processing', { onUnknownState: 'error' })).toMatchObject({ code: 'poll_deadline' });
    expect(await run('Processing', { onUnknownState: 'error' })).toMatchObject({ code: 'job_unknown_state' });
    expect(await run('warming_up', { onUnknownState: 'error', pendingStates: ['warming_up'] })).toMatchObject({ code: 'poll_deadline' });
  });

  it('treats unknown states as pending by default, or fails on them when asked', async () => {
    const odd = { status: 200, body: { job_id: 'j', status: 'transmogrifying' } };
    const scheduler = new VirtualTimeScheduler();
    const { fetch } = scriptedFetch([odd]);
    const err = await new Promise<unknown>((resolve) => client(fetch).pollJob('j', { onUnknownState: 'error', scheduler }).subscribe({ error: resolve }));
    expect(err).toMatchObject({ code: 'job_unknown_state' });
    const f2 = scriptedFetch([odd, { status: 200, body: { job_id: 'j', status: 'completed' } }]);
    let done = false;
    client(f2.fetch).pollJob('j', { intervalMs: 10, scheduler }).subscribe({ complete: () => (done = true) });
    for (let t = 0; t <= 50 && !done; t += 5) {
      await settle();
      scheduler.maxFrames = t;
      scheduler.flush();
    }
    expect(done).toBe(true);
  });

  it('refuses a record without a status as a contract breach', async () => {
    const { fetch } = scriptedFetch([{ status: 200, body: { job_id: 'j' } }]);
    const err = await lastValueFrom(client(fetch).pollJob('j')).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SvcError);
    expect(err).toMatchObject({ name: 'ContractError', code: 'invalid_response' });
  });

  it('clears its asyncScheduler timers on unsubscribe (fake timers)', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval'] });
    const { fetch, calls } = scriptedFetch([processing]);
    const sub = client(fetch).pollJob('j', { intervalMs: 1000, deadlineMs: 60_000 }).subscribe();
    await settle();
    expect(calls).toHaveLength(1);
    expect(vi.getTimerCount()).toBe(2); // the next poll and the deadline
    await vi.advanceTimersByTimeAsync(1000);
    await settle();
    expect(calls).toHaveLength(2);
    sub.unsubscribe();
    expect(vi.getTimerCount()).toBe(0);
    await vi.advanceTimersByTimeAsync(10_000);
    expect(calls).toHaveLength(2);
  });
});
