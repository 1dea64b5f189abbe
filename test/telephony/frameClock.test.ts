import { VirtualTimeScheduler } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { FrameClock } from '../../src/telephony/frameClock.js';
import { frameBytesOf, LiveAudio } from '../../src/telephony/liveAudio.js';
import { PlayoutStream } from '../../src/telephony/playoutStream.js';
import { resolvePayloadType } from 'svc-stream/telephony';

const MULAW = { audio_format: 'mulaw', sample_rate: 8000, num_channels: 1 } as const;
const PCMU = resolvePayloadType(0)!;
const pkt = (seq: number) => ({ seq, timestamp: seq * 160, payload: new Uint8Array(160).fill(seq), samples: 160 });

describe('frame grouping (frameMs) on virtual time', () => {
  it('joins 20 ms chunks into 100 ms frames, in order; a partial frame goes when its oldest chunk has waited frameMs; the end flushes', () => {
    const scheduler = new VirtualTimeScheduler(undefined, 100_000);
    const clock = new FrameClock(100, scheduler);
    const live = new LiveAudio(MULAW, { clock, scheduler });
    const out: Array<[at: number, bytes: number, first: number]> = [];
    let completedAt: number | undefined;
    live.audio$.subscribe({ next: (c) => out.push([scheduler.now(), c.byteLength, c[0]!]), complete: () => (completedAt = scheduler.now()) });
    // Seven chunks every 20 ms, then the caller pauses; the call ends at 1000 ms.
    for (let k = 0; k < 7; k++) scheduler.schedule(() => live.push(new Uint8Array(160).fill(k + 1)), k * 20);
    scheduler.schedule(() => live.end(), 1000);
    scheduler.flush();
    // 5 chunks (800 B) at 80 ms; the last two, held since 100 ms, go on the clock's first tick past 200 ms.
    expect(out).toEqual([
      [80, 800, 1],
      [200, 320, 6],
    ]);
    expect(completedAt).toBe(1000);
    expect(live.bytes).toBe(7 * 160);
  });

  it('through a PlayoutStream: bytes and order kept, fills grouped with the audio; the clock stops when every stream has ended', () => {
    const scheduler = new VirtualTimeScheduler(undefined, 100_000);
    const clock = new FrameClock(60, scheduler);
    const stream = new PlayoutStream(PCMU, { scheduler, idleTimeoutMs: 500, playoutDelayMs: 40, grouping: { clock, scheduler } });
    const chunks: Uint8Array[] = [];
    stream.live.audio$.subscribe((c) => chunks.push(c));
    // Packet 3 is lost: filled with silence after 40 ms, and grouped with what follows.
    for (const seq of [1, 2, 4, 5, 6, 7]) scheduler.schedule(() => stream.push(pkt(seq)), (seq - 1) * 20);
    scheduler.flush();
    const all = Buffer.concat(chunks);
    expect(all.byteLength).toBe(7 * 160);
    expect([...all.subarray(0, 160)].every((b) => b === 1)).toBe(true);
    expect([...all.subarray(320, 480)].every((b) => b === 0xff)).toBe(true);
    expect([...all.subarray(960)].every((b) => b === 7)).toBe(true);
    expect(chunks.every((c) => c.byteLength <= frameBytesOf(MULAW, 60))).toBe(true);
    expect(chunks.length).toBeLessThan(7);
    expect(stream.ended).toBe(true);
  });

  it('frame sizes are whole sample frames; containers are not grouped', () => {
    expect(frameBytesOf(MULAW, 100)).toBe(800);
    expect(frameBytesOf({ audio_format: 's16le', sample_rate: 16000, num_channels: 2 }, 30)).toBe(1920);
    expect(frameBytesOf({ audio_format: 'ogg' }, 100)).toBe(0);
    expect(frameBytesOf(MULAW, 0)).toBe(0);
  });
});
