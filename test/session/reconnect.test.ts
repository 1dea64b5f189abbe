// Live calls survive the network, on real sockets: a session dropped mid-call (the emulator's
// drop, a TCP proxy that blackholes or resets, the emulator killed and restarted on the same
// port, a planned restart, a refused handshake on reconnect) reconnects and resumes. Every
// speech segment of the audio appears once, at its true position (the emulator's VAD on the
// uninterrupted audio) within 50 ms; time is monotone across the break; the audio account adds
// up; nothing is left running.
import { readFileSync } from 'node:fs';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { Observable } from 'rxjs';
import { analyzeConversation, createSessionStats, fileSource, splitSession, type SessionEvent, type SessionStats, type SvcError } from 'svc-stream';
import { startEmulator, type RunningEmulator, type ScenarioInput } from 'svc-stream/emulator';
import type { SessionState } from '../../src/schema/sessionState.js';
import { startTcpProxy } from '../internal/tcpProxy.js';
import { spawnEmulator } from '../internal/emulatorProcess.js';
import { SegmentClock } from '../../src/session/SegmentClock.js';

const KEY = 'svc-emulator-dev-key';
const RAW = { audio_format: 's16le', sample_rate: 16000, num_channels: 1 } as const;
const WAV = readFileSync(new URL('../../samples/call.wav', import.meta.url));
/** 14 s of the sample call, raw s16le 16 kHz mono: six utterances or so. */
const PCM = WAV.subarray(44, 44 + 14 * 32_000);
/** The same 14 s as a WAV (a canonical 44-byte header with the sizes fixed). */
const WAV14 = (() => {
  const b = Buffer.concat([WAV.subarray(0, 44), PCM]);
  b.writeUInt32LE(b.length - 8, 4);
  b.writeUInt32LE(PCM.length, 40);
  return b;
})();
/** Small bounds so each test is short. */
const FAST = {
  apiKey: KEY,
  heartbeat: { intervalMs: 100, timeoutMs: 500 },
  connectTimeoutMs: 2_000,
  reconnect: { initialDelayMs: 50, maxDelayMs: 300, maxAttempts: 20, deadlineMs: 20_000 },
} as const;

const cleanups: Array<() => Promise<unknown> | void> = [];
let baseline = new Map<string, number>();
beforeEach(() => {
  baseline = countByType(process.getActiveResourcesInfo());
});
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
  // Nothing left running: no socket, timer or child process above what was there before.
  // The poll's own timer is a Timeout while it runs: wait for the sockets, then check everything.
  await expect.poll(() => leftovers().filter((e) => !e.startsWith('Timeout')), { timeout: 3_000 }).toEqual([]);
  expect(leftovers()).toEqual([]);
});

function countByType(list: readonly string[]): Map<string, number> {
  const m = new Map<string, number>();
  for (const t of list) m.set(t, (m.get(t) ?? 0) + 1);
  return m;
}

function leftovers(): string[] {
  const extra: string[] = [];
  for (const [type, n] of countByType(process.getActiveResourcesInfo())) if (n > (baseline.get(type) ?? 0)) extra.push(`${type} +${n - (baseline.get(type) ?? 0)}`);
  return extra;
}

/**
 * A live source: 20 ms frames of `pcm`, one every `everyMs` (2 ms: ten times real time);
 * `cue` is called once the audio emitted reaches `cue.atMs` (a fault struck at a point of the
 * audio, not after a delay).
 */
function live20ms(pcm: Buffer, everyMs = 2, cue?: { readonly atMs: number; readonly then: () => void }): Observable<Uint8Array> {
  return new Observable<Uint8Array>((s) => {
    let at = 0;
    let cued = false;
    const t = setInterval(() => {
      if (at >= pcm.length) {
        clearInterval(t);
        s.complete();
        return;
      }
      s.next(pcm.subarray(at, at + 640));
      at += 640;
      if (cue !== undefined && !cued && at >= cue.atMs * 32) {
        cued = true;
        cue.then();
      }
    }, everyMs);
    return () => clearInterval(t);
  });
}

interface Outcome {
  readonly events: SessionEvent[];
  readonly states: string[];
  readonly stats: SessionStats;
  readonly error?: SvcError | undefined;
}

function run(audio$: Observable<Uint8Array>, options: Parameters<typeof analyzeConversation>[0], onState?: (s: SessionState) => void): Promise<Outcome> {
  const stats = options?.stats ?? createSessionStats();
  const events: SessionEvent[] = [];
  const states: string[] = [];
  return new Promise((resolve) => {
    const sub = audio$
      .pipe(analyzeConversation({ ...FAST, ...options, stats, onStateChange: (_, s) => (states.push(s.status), onState?.(s)) }))
      .subscribe({
        next: (e) => events.push(e),
        error: (error: unknown) => resolve({ events, states, stats, error: error as SvcError }),
        complete: () => resolve({ events, states, stats }),
      });
    cleanups.push(() => sub.unsubscribe());
  });
}

type Span = { start: number; end: number };
const clipsOf = (events: readonly SessionEvent[]): Span[] =>
  events.flatMap((e) => (e.type === 'clip' ? [{ start: e.clip.start_ms!, end: e.clip.start_ms! + e.clip.duration_ms! }] : []));

let truth: Span[] = [];
let truthDurationMs = 0;

beforeAll(async () => {
  // The true segments: the emulator's VAD over the uninterrupted audio, one session.
  const emu = await startEmulator({ apiKey: KEY });
  try {
    const r = await run(live20ms(PCM, 0), { baseUrl: emu.baseUrl, format: RAW });
    expect(r.error).toBeUndefined();
    truth = clipsOf(r.events);
    truthDurationMs = (r.events.at(-1) as { duration_ms: number }).duration_ms;
  } finally {
    await emu.close();
  }
  expect(truth.length).toBeGreaterThanOrEqual(4);
}, 30_000);

/** Every true segment once, within 50 ms; no other clip; time monotone; one done with the whole duration. */
function expectOneConversation(r: Outcome, totalBytes: number): void {
  expect(r.error, String(r.error)).toBeUndefined();
  const got = clipsOf(r.events);
  for (const t of truth) {
    const matches = got.filter((g) => Math.abs(g.start - t.start) <= 50 && Math.abs(g.end - t.end) <= 50);
    expect(matches, `segment ${t.start}-${t.end} in ${JSON.stringify(got)}`).toHaveLength(1);
  }
  expect(got).toHaveLength(truth.length);
  for (let i = 1; i < got.length; i++) expect(got[i]!.start).toBeGreaterThanOrEqual(got[i - 1]!.end);
  const done = r.events.filter((e) => e.type === 'done');
  expect(done).toHaveLength(1);
  expect(Math.abs((done[0] as { duration_ms: number }).duration_ms - truthDurationMs)).toBeLessThanOrEqual(50);
  // After a reconnect the events say their segment.
  expect(r.stats.reconnects).toBeGreaterThanOrEqual(1);
  expect(r.events.some((e) => (e.segment ?? 0) >= 1)).toBe(true);
  expect(r.states).toContain('reconnecting');
  // The audio account: every byte read once; everything after the commit point sent again, nothing dropped.
  expect(r.stats.bytesRead).toBe(totalBytes);
  expect(r.stats.bytesDropped).toBe(0);
  expect(r.stats.bytesSent).toBeGreaterThanOrEqual(totalBytes);
  expect(r.stats.bytesSent).toBeLessThanOrEqual(totalBytes + r.stats.bytesReplayed);
  expect(r.stats.bytesReplayed).toBeGreaterThan(0);
  expect(r.stats.status).toBe('done');
}

/** A scenario that strikes `fault` in the first connection only. */
function firstConnectionOnly(fault: NonNullable<ScenarioInput['faults']>[number]): () => ScenarioInput {
  let n = 0;
  return () => (n++ === 0 ? { faults: [fault] } : {});
}

async function emulator(scenario?: () => ScenarioInput): Promise<RunningEmulator> {
  const emu = await startEmulator({ apiKey: KEY, ...(scenario ? { scenario } : {}) });
  cleanups.push(() => emu.close());
  return emu;
}

describe('reconnect with resume (real sockets)', () => {
  it('a live 20 ms source, the connection dropped mid-call (no close frame): one conversation', async () => {
    const emu = await emulator(firstConnectionOnly({ at: 'audio', at_ms: 5_000, action: 'drop' }));
    const r = await run(live20ms(PCM), { baseUrl: emu.baseUrl, format: RAW });
    expectOneConversation(r, PCM.length);
    await expect.poll(() => emu.connections.map((c) => c.closeCode)).toEqual([1006, 1000]);
  });

  it('a WAV file (pull source), dropped mid-call: resumed as its raw format, one conversation', async () => {
    const emu = await emulator(firstConnectionOnly({ at: 'audio', at_ms: 6_000, action: 'drop' }));
    const path = `${process.env['TMPDIR'] ?? '/tmp'}/svc-reconnect-${process.pid}.wav`;
    const { writeFileSync, rmSync } = await import('node:fs');
    writeFileSync(path, WAV14);
    cleanups.push(() => rmSync(path, { force: true }));
    const r = await run(fileSource(path), { baseUrl: emu.baseUrl });
    expectOneConversation(r, WAV14.length);
  });

  it('a TCP proxy that blackholes both directions: heartbeat_timeout, then a new session', async () => {
    const emu = await emulator();
    const proxy = await startTcpProxy(emu.port);
    cleanups.push(() => proxy.close());
    // Blackholed 4 s into the audio.
    const r = await run(live20ms(PCM, 2, { atMs: 4_000, then: () => proxy.setMode('blackhole') }), { baseUrl: proxy.baseUrl, format: RAW }, (s) => {
      if (s.status === 'reconnecting') {
        expect((s as { error: SvcError }).error.code).toBe('heartbeat_timeout');
        proxy.setMode('forward');
      }
    });
    expectOneConversation(r, PCM.length);
  });

  it('a TCP proxy that resets both sides mid-call', async () => {
    const emu = await emulator();
    const proxy = await startTcpProxy(emu.port);
    cleanups.push(() => proxy.close());
    // Reset 4.8 s into the audio.
    const r = await run(live20ms(PCM, 2, { atMs: 4_800, then: () => proxy.reset() }), { baseUrl: proxy.baseUrl, format: RAW });
    expectOneConversation(r, PCM.length);
  });

  it('a refused handshake on reconnect (4030, concurrency) is retried with backoff', async () => {
    let n = 0;
    const emu = await emulator(() => {
      n++;
      if (n === 1) return { faults: [{ at: 'audio', at_ms: 4_000, action: 'drop' }] };
      if (n === 2) return { faults: [{ at: 'handshake', action: 'close', code: 4030, error: 'Concurrent request limit reached. Please wait for an existing request to complete.' }] };
      return {};
    });
    const reasons: string[] = [];
    const r = await run(live20ms(PCM), { baseUrl: emu.baseUrl, format: RAW }, (s) => {
      if (s.status === 'reconnecting') reasons.push((s as { error: SvcError }).error.code);
    });
    expectOneConversation(r, PCM.length);
    expect(reasons).toEqual(['connection_lost', 'concurrency_limit']);
  });

  it('a non-retryable failure on reconnect (invalid key) fails at once with its code', async () => {
    let n = 0;
    const emu = await emulator(() => (n++ === 0 ? { faults: [{ at: 'audio', at_ms: 3_000, action: 'drop' }] } : { faults: [{ at: 'handshake', action: 'close', code: 4001, error: 'Invalid API key.' }] }));
    const r = await run(live20ms(PCM), { baseUrl: emu.baseUrl, format: RAW });
    expect(r.error?.code).toBe('invalid_api_key');
    expect(r.states.filter((s) => s === 'reconnecting')).toHaveLength(1);
    expect(r.stats.status).toBe('failed');
  });

  it('a live source through a long outage: audio beyond the bounds is counted as dropped, and time stays true', async () => {
    const emu = await emulator();
    const proxy = await startTcpProxy(emu.port);
    cleanups.push(() => proxy.close());
    // Blackholed 4 s into the audio; back only once 4 s more of it were read during the outage.
    let downAtBytes: number | undefined;
    const stats = createSessionStats();
    const cut = live20ms(PCM, 2, { atMs: 4_000, then: () => proxy.setMode('blackhole') });
    const audio$ = new Observable<Uint8Array>((s) =>
      cut.subscribe({
        next: (c) => {
          s.next(c);
          if (downAtBytes !== undefined && stats.bytesRead - downAtBytes >= 4_000 * 32) {
            downAtBytes = undefined;
            proxy.setMode('forward');
          }
        },
        complete: () => s.complete(),
      }),
    );
    const r = await run(audio$, { baseUrl: proxy.baseUrl, format: RAW, stats, reconnect: { ...FAST.reconnect, replayMs: 500, outageMs: 500 } }, (s) => {
      if (s.status === 'reconnecting' && downAtBytes === undefined) downAtBytes = stats.bytesRead;
    });
    expect(r.error).toBeUndefined();
    expect(r.stats.bytesDropped).toBeGreaterThan(0);
    expect(r.stats.bytesRead).toBe(PCM.length);
    // Whatever was analysed is where it truly is.
    for (const g of clipsOf(r.events)) expect(truth.some((t) => g.start >= t.start - 50 && g.end <= t.end + 50)).toBe(true);
  });
});

describe('the emulator process killed and restarted on the same port', () => {
  for (const signal of ['SIGKILL', 'SIGTERM'] as const) {
    it(`${signal} mid-call, a new emulator on the same port: one conversation`, async () => {
      let emu = await spawnEmulator();
      const port = emu.port;
      cleanups.push(() => emu.stop('SIGKILL'));
      const reasons: string[] = [];
      // Ten times real time, as the others (the audio read during the outage is held for the
      // replay: 14 s is within its default bound); stopped 4 s into the audio.
      const restart = (): void =>
        void emu.stop(signal).then(async () => {
          emu = await spawnEmulator(port);
        });
      const r = await run(live20ms(PCM, 2, { atMs: 4_000, then: restart }), { baseUrl: emu.baseUrl, apiKey: emu.apiKey, format: RAW, reconnect: { ...FAST.reconnect, maxDelayMs: 500, deadlineMs: 30_000, maxAttempts: 100 } }, (s) => {
        if (s.status === 'reconnecting') reasons.push((s as { error: SvcError }).error.code);
      });
      expectOneConversation(r, PCM.length);
      expect(reasons[0]).toBe(signal === 'SIGKILL' ? 'connection_lost' : 'service_restart');
      // Attempts that failed while no server answered (refused, or not answered while it
      // started) are no segment: each session that opened again is one, the first of them 1.
      expect(reasons.length).toBeGreaterThan(1);
      expect(r.stats.segment).toBe(r.stats.reconnects);
      const segments = new Set(r.events.flatMap((e) => (e.segment === undefined ? [] : [e.segment])));
      expect(Math.min(...segments)).toBe(1);
      // Killed, the old server opens nothing more: one session after it, segment 1.
      if (signal === 'SIGKILL') expect([...segments]).toEqual([1]);
    }, 120_000);
  }
});

describe('derived state across segments', () => {
  it('splitSession over a reconnected stream keeps every earlier clip in one transcript', async () => {
    const emu = await emulator(firstConnectionOnly({ at: 'audio', at_ms: 5_000, action: 'drop' }));
    const stats = createSessionStats();
    const s = splitSession(live20ms(PCM).pipe(analyzeConversation({ ...FAST, baseUrl: emu.baseUrl, format: RAW, stats })));
    const transcript = await new Promise<number>((resolve, reject) => {
      let last = 0;
      const sub = s.liveTranscript$.subscribe({ next: (t) => (last = t.size), error: reject, complete: () => resolve(last) });
      cleanups.push(() => sub.unsubscribe());
    });
    expect(stats.reconnects).toBe(1);
    expect(transcript).toBe(truth.length);
  });

  it('SegmentClock: re-bases, tags, drops a duplicate of a finalized clip, keeps a reused UUID apart', () => {
    const clock = new SegmentClock();
    const clip = (uuid: string, start: number, duration: number) => ({ type: 'clip' as const, clip: { clip_uuid: uuid, text: '', start_ms: start, duration_ms: duration, speaker_label: '1' } });
    expect(clock.deliver(clip('a', 100, 900))).toEqual(clip('a', 100, 900));
    clock.deliver({ type: 'partial_clip', partial_clip: { clip_uuid: 'b', text: '', start_ms: 1500, end_ms: null, speaker_label: null } });
    expect(clock.commitMs).toBe(1000);
    clock.nextSegment(1000);
    // The same utterance analysed again (start 500 in the segment = 1500 on the stream), reusing UUID 'a'.
    const again = clock.deliver(clip('a', 500, 700));
    expect(again).toMatchObject({ segment: 1, clip: { start_ms: 1500, duration_ms: 700 } });
    expect((again as { clip: { clip_uuid: string } }).clip.clip_uuid).not.toBe('a');
    expect(clock.deliver({ type: 'done', duration_ms: 3000 })).toEqual({ type: 'done', duration_ms: 4000, segment: 1 });
    // The utterance in progress at the break ('b', from 1500) finalized by the new segment keeps the partial's UUID.
    const c3 = new SegmentClock();
    c3.deliver(clip('a', 100, 900));
    c3.deliver({ type: 'partial_clip', partial_clip: { clip_uuid: 'b', text: '', start_ms: 1500, end_ms: null, speaker_label: null } });
    c3.nextSegment(c3.commitMs);
    expect(c3.deliver(clip('z', 510, 800))).toMatchObject({ segment: 1, clip: { clip_uuid: 'b', start_ms: 1510 } });
    // A clip that lies inside one finalized before the break is a duplicate.
    const c2 = new SegmentClock();
    c2.deliver(clip('x', 0, 2000));
    c2.nextSegment(1500);
    expect(c2.deliver(clip('y', 0, 400))).toBeUndefined();
    expect(c2.duplicates).toBe(1);
  });
});
