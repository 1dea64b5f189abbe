import { config as rxConfig, firstValueFrom, lastValueFrom, of, Subject, tap, timeout, toArray, type Subscription } from 'rxjs';
import { afterEach, describe, expect, it } from 'vitest';
import { startEmulator, type RunningEmulator } from '../../src/emulator/index.js';
import { analyzeCalls, createAnalyzeCallsStats, rtpSource, type CallAnalysis, type CallLeg } from 'svc-stream/telephony';
import { LiveAudio } from '../../src/telephony/LiveAudio.js';
import { SAMPLE_MULAW, sendRtpCall } from './helpers.js';
import { readFileSync } from 'node:fs';
import { virtualTime } from '../internal/virtualTime.js';
import { settlesWithin } from '../internal/bounds.js';

const MULAW = readFileSync(SAMPLE_MULAW);
let emu: RunningEmulator | undefined;
const subs: Subscription[] = [];
afterEach(async () => {
  subs.splice(0).forEach((s) => s.unsubscribe());
  await emu?.close();
  emu = undefined;
});

/** A call whose audio is already over: `ms` of the sample as mulaw. */
function recordedCall(id: string, ms: number) {
  const live = new LiveAudio({ audio_format: 'mulaw', sample_rate: 8000, num_channels: 1 });
  live.push(MULAW.subarray(0, ms * 8));
  live.end();
  return { id, audio$: live.audio$ };
}

describe('analyzeCalls', () => {
  it('runs 50 concurrent RTP calls through the emulator, 25 at a time, every one to done', async () => {
    emu = await startEmulator({ organizations: [{ id: 'telco', keys: ['k-telco'], concurrency: 25 }] });
    let resolvePort!: (p: number) => void;
    const port = new Promise<number>((r) => (resolvePort = r));
    const legs$ = rtpSource({ idleTimeoutMs: 300, recvBufferSize: 1 << 22, onListening: (a) => resolvePort(a.port) });
    const callStats = createAnalyzeCallsStats();
    const analyses: Array<CallAnalysis<CallLeg>> = [];
    const outcomes = new Subject<{ id: string; status: string; duration: number | null; error?: unknown }>();
    subs.push(
      analyzeCalls(legs$, { apiKey: 'k-telco', baseUrl: emu.baseUrl, maxConcurrent: 25, whenFull: 'queue', maxQueueMs: 20_000, callStats }).subscribe((a) => {
        analyses.push(a);
        a.outcome$.subscribe((o) => outcomes.next({ id: a.id, status: o.status, duration: o.snapshot.aggregates.audioDurationMs, error: o.error }));
      }),
    );
    const got: Array<{ id: string; status: string; duration: number | null; error?: unknown }> = [];
    const all = new Promise<void>((resolve) => outcomes.subscribe((o) => (got.push(o), got.length === 50 && resolve())));
    const p = await port;
    await Promise.all(Array.from({ length: 50 }, (_, i) => sendRtpCall(p, 0x1000 + i, 1, 4)));
    await settlesWithin(all, 25_000); // a guard: what came by then is checked below
    expect(got.filter((o) => o.status !== 'done').map((o) => String(o.error))).toEqual([]);
    expect(got).toHaveLength(50);
    for (const o of got) expect(o.duration).toBe(1000);
    const org = emu.accounts.organizations[0]!;
    expect(org.peakInFlight.conversation).toBeLessThanOrEqual(25);
    expect(org.peakInFlight.conversation).toBeGreaterThan(1);
    expect(callStats).toMatchObject({ calls: 50, done: 50, failed: 0, rejected: 0, running: 0, queued: 0 });
    expect(callStats.peakRunning).toBe(org.peakInFlight.conversation);
    expect(analyses.every((a) => a.status === 'done' && a.stats.bytesSent === 8000)).toBe(true);
  }, 30_000);

  it("rejects calls beyond the bound with 'reject', reporting them", async () => {
    emu = await startEmulator({ organizations: [{ keys: ['k'], concurrency: 5 }] });
    const calls = ['a', 'b', 'c', 'd'].map((id) => recordedCall(id, 600));
    const results = await lastValueFrom(
      analyzeCalls(of(...calls), { apiKey: 'k', baseUrl: emu.baseUrl, maxConcurrent: 2, whenFull: 'reject' }).pipe(toArray(), timeout(15_000)),
    );
    const outcomes = await Promise.all(results.map((r) => firstValueFrom(r.outcome$)));
    expect(outcomes.map((o) => o.status)).toEqual(['done', 'done', 'rejected', 'rejected']);
    expect((outcomes[2]!.error as { code: string }).code).toBe('concurrency_limit');
    expect(emu.accounts.organizations[0]!.peakInFlight.conversation).toBe(2);
  });

  it('a live call queued longer than maxQueueMs is refused as stale, said and counted; one served in time reports its wait', async () => {
    emu = await startEmulator({ organizations: [{ keys: ['k'], concurrency: 5 }] });
    // The queue's clock is virtual (the sessions' sockets are real; none of their timers is due).
    const clock = virtualTime();
    // A live call that goes on holds the only slot; the next two wait.
    const live = new LiveAudio({ audio_format: 'mulaw', sample_rate: 8000, num_channels: 1 });
    live.push(MULAW.subarray(0, 800));
    const callStats = createAnalyzeCallsStats();
    const analyses: CallAnalysis[] = [];
    const calls = new Subject<{ id: string; audio$: LiveAudio['audio$'] }>();
    subs.push(
      analyzeCalls(calls, { apiKey: 'k', baseUrl: emu.baseUrl, maxConcurrent: 1, maxQueueMs: 300, callStats, scheduler: clock.scheduler }).subscribe((a) => analyses.push(a)),
    );
    calls.next({ id: 'live', audio$: live.audio$ });
    calls.next(recordedCall('late', 200));
    clock.advance(299);
    expect(analyses[1]!.status).toBe('queued');
    expect(analyses[1]!.queuedMs).toBe(299);
    clock.advance(1);
    const late = await firstValueFrom(analyses[1]!.outcome$.pipe(timeout(5_000)));
    expect(late.status).toBe('rejected');
    expect(late.error).toMatchObject({ code: 'concurrency_limit', message: expect.stringContaining('waited 300 ms') });
    expect(analyses[1]!.status).toBe('rejected');
    expect(analyses[1]!.queuedMs).toBe(300);
    expect(callStats).toMatchObject({ rejected: 1, queueTimeouts: 1, queued: 0, running: 1 });
    // A call that gets the slot within the limit starts, and says how long it waited.
    calls.next(recordedCall('next', 200));
    clock.advance(120);
    live.end();
    const next = await firstValueFrom(analyses[2]!.outcome$.pipe(timeout(10_000)));
    expect(next.status).toBe('done');
    expect(analyses[2]!.queuedMs).toBe(120);
    expect(callStats.peakQueuedMs).toBe(120);
  });

  it("a call's failure is its own: the others finish", async () => {
    emu = await startEmulator({ organizations: [{ keys: ['good'], concurrency: 5 }] });
    const calls = ['a', 'b', 'c'].map((id) => recordedCall(id, 600));
    const results = await lastValueFrom(
      analyzeCalls(of(...calls), { apiKey: 'good', baseUrl: emu.baseUrl, sessionOptions: (c) => (c.id === 'b' ? { apiKey: 'bad' } : {}) }).pipe(toArray(), timeout(15_000)),
    );
    const outcomes = await Promise.all(results.map((r) => firstValueFrom(r.outcome$)));
    expect(outcomes.map((o) => o.status)).toEqual(['done', 'error', 'done']);
    expect((outcomes[1]!.error as { code: string }).code).toBe('invalid_api_key');
  });

  it("a failed call's streams, subscribed without error callbacks, raise no unhandled error: they complete with the last state, the failure is the outcome", async () => {
    emu = await startEmulator({ organizations: [{ keys: ['good'], concurrency: 5 }] });
    const unhandled: unknown[] = [];
    const before = rxConfig.onUnhandledError;
    rxConfig.onUnhandledError = (err) => unhandled.push(err);
    try {
      const calls = ['a', 'b'].map((id) => recordedCall(id, 600));
      const completed: string[] = [];
      const results = await lastValueFrom(
        analyzeCalls(of(...calls), { apiKey: 'good', baseUrl: emu.baseUrl, sessionOptions: (c) => (c.id === 'b' ? { apiKey: 'bad' } : {}) }).pipe(
          // The bridge as docs/telephony.md writes it: next handlers only.
          tap((a) => {
            for (const [name, stream$] of Object.entries(a.streams)) subs.push(stream$.subscribe({ next: () => undefined, complete: () => completed.push(`${a.id}.${name}`) }));
          }),
          toArray(),
          timeout(15_000),
        ),
      );
      const outcomes = await Promise.all(results.map((r) => firstValueFrom(r.outcome$)));
      expect(outcomes.map((o) => o.status)).toEqual(['done', 'error']);
      expect((outcomes[1]!.error as { code: string }).code).toBe('invalid_api_key');
      // A late subscriber to the failed call: completion (no error), and no new session.
      await expect.poll(() => emu!.connections.length).toBeGreaterThanOrEqual(2);
      const connectionsBefore = emu.connections.length;
      expect(connectionsBefore).toBe(2);
      await expect(lastValueFrom(results[1]!.streams.snapshot$, { defaultValue: 'none' })).resolves.toBeDefined();
      await new Promise((r) => setTimeout(r, 50));
      expect(emu.connections.length).toBe(connectionsBefore);
      expect(completed.filter((c) => c.startsWith('b.'))).toHaveLength(Object.keys(results[1]!.streams).length);
      expect(unhandled).toEqual([]);
    } finally {
      rxConfig.onUnhandledError = before;
    }
  });

  it('exposes per-call derived streams that replay to late subscribers', async () => {
    emu = await startEmulator({ scenario: JSON.parse(readFileSync(new URL('../../samples/call.scenario.json', import.meta.url), 'utf8')) });
    const [call] = await lastValueFrom(analyzeCalls(of(recordedCall('x', 8000)), { apiKey: emu.apiKey, baseUrl: emu.baseUrl }).pipe(toArray()));
    await firstValueFrom(call!.outcome$);
    const transcript = await firstValueFrom(call!.streams.liveTranscript$);
    expect(transcript.toArray().length).toBeGreaterThan(0);
    const roles = await firstValueFrom(call!.streams.currentRoles$);
    expect(roles.toArray().map((r) => r.name).sort()).toEqual(['Agent', 'Customer']);
  });
});

describe('analyzeCalls without a service', () => {
  it('reports a call whose session fails synchronously (invalid config) and completes', async () => {
    const calls = [recordedCall('a', 100)];
    const results = await lastValueFrom(
      analyzeCalls(of(...calls), { apiKey: 'k', baseUrl: 'http://127.0.0.1:9', config: { stt: { custom_terms: [{ term: '' }] } } as never }).pipe(toArray(), timeout(5000)),
    );
    const o = await firstValueFrom(results[0]!.outcome$);
    expect(o.status).toBe('error');
    expect((o.error as { code: string }).code).toBe('invalid_config');
  });
});
