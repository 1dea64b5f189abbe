import { VirtualTimeScheduler } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { DEFAULT_LIVE_FRAME_MS, LiveAudio } from '../../src/telephony/liveAudio.js';
import { PlayoutStream } from '../../src/telephony/playoutStream.js';
import { TimerWheel } from '../../src/internal/timerWheel.js';
import { resolvePayloadType } from 'svc-stream/telephony';

const MULAW = { audio_format: 'mulaw', sample_rate: 8000, num_channels: 1 } as const;
const PCMU = resolvePayloadType(0)!;
const pkt = (seq: number) => ({ seq, timestamp: seq * 160, payload: new Uint8Array(160).fill(seq), samples: 160 });

describe('LiveAudio', () => {
  it('keeps what is pushed before the first subscriber, then goes live; a later subscriber gets live chunks only', () => {
    const live = new LiveAudio(MULAW);
    live.push(new Uint8Array([1]));
    const first: number[] = [];
    live.audio$.subscribe((c) => first.push(...c));
    live.push(new Uint8Array([2]));
    const second: number[] = [];
    live.audio$.subscribe((c) => second.push(...c));
    live.push(new Uint8Array([3]));
    live.end();
    expect(first).toEqual([1, 2, 3]);
    expect(second).toEqual([3]);
  });
});

describe('frame grouping (frameMs) on virtual time', () => {
  it('joins 20 ms chunks into 100 ms frames, in order; a partial frame goes within frameMs of its first chunk; the end flushes the last partial frame', () => {
    const scheduler = new VirtualTimeScheduler(undefined, 100_000);
    const live = new LiveAudio(MULAW, { frameMs: 100, scheduler });
    const out: Array<[at: number, bytes: number, first: number]> = [];
    let completedAt: number | undefined;
    live.audio$.subscribe({ next: (c) => out.push([scheduler.now(), c.byteLength, c[0]!]), complete: () => (completedAt = scheduler.now()) });
    // Seven chunks every 20 ms, then the caller pauses; two more at 500 and 520, and the call ends at 530.
    for (let k = 0; k < 7; k++) scheduler.schedule(() => live.push(new Uint8Array(160).fill(k + 1)), k * 20);
    scheduler.schedule(() => live.push(new Uint8Array(160).fill(8)), 500);
    scheduler.schedule(() => live.push(new Uint8Array(160).fill(9)), 520);
    scheduler.schedule(() => live.end(), 530);
    scheduler.flush();
    // 5 chunks (800 B) at 80 ms; the two begun at 100 ms go at 190 (within 100 ms of the first);
    // the last two go with the end of the call, not later.
    expect(out).toEqual([
      [80, 800, 1],
      [190, 320, 6],
      [530, 320, 8],
    ]);
    expect(completedAt).toBe(530);
    expect(live.bytes).toBe(9 * 160);
    // Nothing is left on the wheel once the call has ended.
    expect(TimerWheel.of(scheduler).size).toBe(0);
  });

  it('a packet a little late costs no frame of its own: the rest of its window goes with the next window, then frames are windows again', () => {
    const scheduler = new VirtualTimeScheduler(undefined, 100_000);
    const live = new LiveAudio(MULAW, { frameMs: 100, scheduler });
    const out: Array<[at: number, bytes: number, first: number]> = [];
    live.audio$.subscribe((c) => out.push([scheduler.now(), c.byteLength, c[0]!]));
    // Fifteen chunks every 20 ms, but the fifth comes at 95 ms, after its frame was due (90 ms).
    for (let k = 0; k < 15; k++) scheduler.schedule(() => live.push(new Uint8Array(160).fill(k + 1)), k === 4 ? 95 : k * 20);
    scheduler.schedule(() => live.end(), 400);
    scheduler.flush();
    expect(out).toEqual([
      [90, 640, 1],
      [180, 960, 5],
      [280, 800, 11],
    ]);
    expect(out.reduce((n, [, b]) => n + b, 0)).toBe(15 * 160);
  });

  it('a packet lost, reordered or late lands in its frame\'s place: frame window k holds exactly the 20 ms slots 5k+1 … 5k+5', () => {
    const scheduler = new VirtualTimeScheduler(undefined, 100_000);
    const stream = new PlayoutStream(PCMU, { scheduler, idleTimeoutMs: 400, playoutDelayMs: 40, grouping: { frameMs: 100, scheduler } });
    const frames: Uint8Array[] = [];
    stream.live.audio$.subscribe((c) => frames.push(c));
    // Packet 4 never comes; 7 and 8 arrive swapped; 12 arrives after its slot was filled (late).
    const arrivals: Array<[at: number, seq: number]> = [];
    for (let seq = 1; seq <= 15; seq++) {
      if (seq === 4 || seq === 12) continue;
      const at = seq === 7 ? 150 : seq === 8 ? 140 : (seq - 1) * 20;
      arrivals.push([at, seq]);
    }
    arrivals.push([300, 12]);
    for (const [at, seq] of arrivals) scheduler.schedule(() => stream.push(pkt(seq)), at);
    scheduler.flush();
    // The first window's frame went early, at 90 ms, before the jitter buffer gave up on packet 4
    // (at 120 ms); the rest of that window (the fill for 4, then 5) went with the next window, in
    // one frame, not as a write of its own; from there every frame is a window again.
    expect(frames.map((f) => f.byteLength)).toEqual([480, 320 + 800, 800]);
    const all = Buffer.concat(frames);
    for (let seq = 1; seq <= 15; seq++) {
      const slot = all.subarray((seq - 1) * 160, seq * 160);
      const want = seq === 4 || seq === 12 ? 0xff : seq;
      expect([...slot].every((b) => b === want), `slot ${seq}`).toBe(true);
    }
    expect(stream.stats).toMatchObject({ lost: 2, late: 1, reordered: 1, fillBytes: 320 });
    expect(stream.ended).toBe(true);
  });

  it('frames are msToBytes of frameMs: whole sample frames (a 30 ms frame of s16le stereo 16 kHz is 1920 bytes); a container is not grouped; the default is 100 ms', () => {
    expect(DEFAULT_LIVE_FRAME_MS).toBe(100);
    const scheduler = new VirtualTimeScheduler(undefined, 100_000);
    const sizes = (format: ConstructorParameters<typeof LiveAudio>[0], frameMs: number, chunk: number, n: number): number[] => {
      const live = new LiveAudio(format, { frameMs, scheduler });
      const out: number[] = [];
      live.audio$.subscribe((c) => out.push(c.byteLength));
      for (let i = 0; i < n; i++) live.push(new Uint8Array(chunk));
      live.end();
      return out;
    };
    expect(sizes({ audio_format: 's16le', sample_rate: 16000, num_channels: 2 }, 30, 640, 6)).toEqual([1920, 1920]);
    expect(sizes({ audio_format: 'ogg' }, 100, 300, 3)).toEqual([300, 300, 300]);
    scheduler.flush();
  });
});

