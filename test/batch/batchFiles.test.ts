// Many files: the per-model bound seen from the emulator's side, runs stopped by org-wide
// causes, abort and failFast (one call's retries and cancellation: request.test.ts).
import { getEventListeners } from 'node:events';
import { beforeAll, afterAll, describe, expect, it } from 'vitest';
import { from, lastValueFrom, Subject, tap, toArray } from 'rxjs';
import { SvcError } from 'svc-stream';
import { batchLimiter, detectAudioEventsAsync, type FileOutcome, tagFiles, emotionFiles } from 'svc-stream/batch';
import { audioDir, emulators, hanging, type AudioDir } from './fixtures.js';

const AE = '/api/svc-2-audio-event-classifier';
const FAST_RETRY = { concurrencyDelayMs: 2, transientDelayMs: 2, jitter: 0.5 };

let files: AudioDir;
let twenty: string[];
// Twenty sox runs: allow for a loaded machine.
beforeAll(() => {
  files = audioDir();
  const one = files.tone('t0.wav', 1);
  twenty = [one, ...Array.from({ length: 19 }, (_, i) => files.tone(`t${i + 1}.wav`, 1, 200 + i * 50))];
}, 60_000);
afterAll(() => files?.remove());

const emulator = emulators();

const run = <T>(o$: import('rxjs').Observable<FileOutcome<T>>) => lastValueFrom(o$.pipe(toArray()));
const failures = <T>(out: FileOutcome<T>[]) => out.filter((o): o is Extract<FileOutcome<T>, { error: SvcError }> => 'error' in o);


describe('bounded runs', () => {
  it('20 files complete with never more than 2 in flight (emulator peakInFlight)', async () => {
    const emu = await emulator({ organizations: [{ keys: ['k'], concurrency: 2 }] });
    const out = await run(from(twenty).pipe(tagFiles({ baseUrl: emu.baseUrl, apiKey: 'k', concurrency: 2, retry: false })));
    expect(out).toHaveLength(20);
    expect(failures(out)).toEqual([]);
    expect(new Set(out.map((o) => o.path))).toEqual(new Set(twenty));
    const org = emu.accounts.find('k')!;
    expect(org.peakInFlight['audio-event']).toBe(2);
    expect(emu.posts(AE)).toBe(20); // no 429 was needed: the bound held on our side
  });

  it('the bound is shared by separate runs and single calls to the same model and key', async () => {
    const emu = await emulator({ organizations: [{ keys: ['k'], concurrency: 2 }] });
    const o = { baseUrl: emu.baseUrl, apiKey: 'k', retry: false as const };
    batchLimiter({ model: 'audio-event', baseUrl: emu.baseUrl, apiKey: 'k' }, 2);
    const [a, b, c] = await Promise.all([
      run(from(twenty.slice(0, 8)).pipe(tagFiles(o))),
      run(from(twenty.slice(8, 16)).pipe(tagFiles(o))),
      Promise.all(twenty.slice(16).map((p) => detectAudioEventsAsync(p, o))),
    ]);
    expect([...a, ...b].every((x) => 'result' in x)).toBe(true);
    expect(c).toHaveLength(4);
    expect(emu.accounts.find('k')!.peakInFlight['audio-event']).toBe(2);
    expect(emu.posts(AE)).toBe(20);
  });

  it('more permits than the organization has: concurrency rejections are retried until all pass', async () => {
    const emu = await emulator({ organizations: [{ keys: ['k'], concurrency: 1 }] });
    const out = await run(from(twenty.slice(0, 6)).pipe(tagFiles({ baseUrl: emu.baseUrl, apiKey: 'k', concurrency: 3, retry: { ...FAST_RETRY, concurrencyRetries: 50 } })));
    expect(failures(out)).toEqual([]);
    expect(emu.accounts.find('k')!.peakInFlight['audio-event']).toBe(1);
  });

  it('refuses a concurrency over 25', () => {
    expect(() => tagFiles({ baseUrl: 'http://x', apiKey: 'k', concurrency: 26 })).not.toThrow(); // checked on subscribe
    return expect(run(from(['a.wav']).pipe(tagFiles({ baseUrl: 'http://127.0.0.1:1', apiKey: 'k', concurrency: 26 })))).resolves.toMatchObject([
      { path: 'a.wav', error: { code: 'invalid_argument' } },
    ]);
  });
});

describe('runs stopped by org-wide causes', () => {
  it('a monthly quota hit mid-run stops the run; the rest are skipped with that cause', async () => {
    const emu = await emulator({ organizations: [{ keys: ['k'], concurrency: 1, monthlyUsageQuotaMs: { 'audio-event': 5000 } }] });
    const out = await run(from(twenty).pipe(tagFiles({ baseUrl: emu.baseUrl, apiKey: 'k', concurrency: 1, retry: FAST_RETRY })));
    expect(out).toHaveLength(20);
    const ok = out.filter((o) => 'result' in o);
    const failed = failures(out);
    expect(ok).toHaveLength(5);
    expect(failed.filter((f) => !f.skipped).map((f) => [f.error.code, f.error.status])).toEqual([['monthly_usage_limit', 429]]);
    const skipped = failed.filter((f) => f.skipped);
    expect(skipped).toHaveLength(14);
    expect(skipped.every((s) => s.error.code === 'monthly_usage_limit')).toBe(true);
    expect(emu.posts(AE)).toBe(6);
  });

  it('insufficient credits stops the run; paths arriving later are skipped too', async () => {
    const emu = await emulator({ organizations: [{ keys: ['k'], concurrency: 1, credits: 2 }] });
    const paths = new Subject<string>();
    const seen: string[] = [];
    const tagged = paths.pipe(tagFiles({ baseUrl: emu.baseUrl, apiKey: 'k', concurrency: 1 }));
    const watched = tagged.pipe(tap((o) => seen.push('error' in o ? o.error.code : 'result')));
    const done = run(watched);
    for (const p of twenty.slice(0, 4)) paths.next(p);
    // The fifth path arrives once the run has stopped: the four before it all have their outcome.
    await expect.poll(() => seen.length).toBe(4);
    expect(seen).toContain('insufficient_credits');
    paths.next(twenty[4]!);
    paths.complete();
    const out = await done;
    expect(out).toHaveLength(5);
    expect(out.filter((o) => 'result' in o)).toHaveLength(2);
    expect(failures(out).map((f) => [f.error.code, f.skipped])).toEqual([
      ['insufficient_credits', false],
      ['insufficient_credits', true],
      ['insufficient_credits', true],
    ]);
    expect(emu.posts(AE)).toBe(3);
  });

  it('an invalid key stops the run after the requests already in flight', async () => {
    const emu = await emulator({ organizations: [{ keys: ['k'], concurrency: 2 }] });
    const out = await run(from(twenty).pipe(tagFiles({ baseUrl: emu.baseUrl, apiKey: 'wrong', concurrency: 2 })));
    expect(out).toHaveLength(20);
    const sent = failures(out).filter((f) => !f.skipped);
    expect(sent.length).toBeLessThanOrEqual(2);
    expect(failures(out).every((f) => f.error.code === 'invalid_api_key')).toBe(true);
    expect(emu.posts(AE)).toBe(sent.length);
  });

  it('per-file failures do not stop the run', async () => {
    const emu = await emulator({ organizations: [{ keys: ['k'] }] });
    const corrupt = files.bytes('bad.wav', 'not audio');
    const empty = files.bytes('empty.mp3', '');
    const out = await run(from([twenty[0]!, corrupt, empty, twenty[1]!]).pipe(tagFiles({ baseUrl: emu.baseUrl, apiKey: 'k' })));
    expect(Object.fromEntries(out.map((o) => [o.path, 'result' in o ? 'ok' : o.error.code]))).toEqual({
      [twenty[0]!]: 'ok',
      [corrupt]: 'corrupt_audio',
      [empty]: 'empty_file',
      [twenty[1]!]: 'ok',
    });
  });

  it('failFast emits the failure, then errors and sends nothing more', async () => {
    const emu = await emulator({ organizations: [{ keys: ['k'], concurrency: 1 }] });
    const corrupt = files.bytes('bad2.wav', 'not audio');
    const seen: FileOutcome<unknown>[] = [];
    const err = await lastValueFrom(from([corrupt, ...twenty.slice(0, 5)]).pipe(tagFiles({ baseUrl: emu.baseUrl, apiKey: 'k', concurrency: 1, failFast: true })), { defaultValue: undefined })
      .catch((e: unknown) => e);
    void seen;
    expect(err).toMatchObject({ code: 'corrupt_audio' });
    expect(emu.posts(AE)).toBe(1);
  });
});

describe('cancellation', () => {
  it('aborting a run errors it with aborted and frees every permit', async () => {
    const h = hanging();
    const emu = await emulator({ routes: [h.route] });
    const ac = new AbortController();
    const p = run(from(twenty).pipe(emotionFiles({ baseUrl: emu.baseUrl, apiKey: emu.apiKey, signal: ac.signal }), ));
    void p.catch(() => undefined);
    const p2 = run(from(twenty).pipe(tagFiles({ baseUrl: emu.baseUrl, apiKey: emu.apiKey, signal: ac.signal })));
    await h.arrived;
    ac.abort();
    await expect(p2).rejects.toMatchObject({ code: 'aborted' });
    await expect(p).rejects.toMatchObject({ code: 'aborted' });
    const limiter = batchLimiter({ model: 'audio-event', baseUrl: emu.baseUrl, apiKey: emu.apiKey });
    expect([limiter.inUse, limiter.waiting]).toEqual([0, 0]);
  });

  it('a run of twenty files holds one listener on its signal, not one per file (no MaxListenersExceededWarning)', async () => {
    const h = hanging();
    const emu = await emulator({ routes: [h.route] });
    const ac = new AbortController();
    const p = run(from(twenty).pipe(tagFiles({ baseUrl: emu.baseUrl, apiKey: emu.apiKey, signal: ac.signal })));
    await h.arrived;
    expect(getEventListeners(ac.signal, 'abort')).toHaveLength(1);
    ac.abort();
    await expect(p).rejects.toMatchObject({ code: 'aborted' });
    expect(getEventListeners(ac.signal, 'abort')).toHaveLength(0);
  });
});
