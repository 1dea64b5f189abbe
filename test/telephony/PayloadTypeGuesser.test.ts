import { VirtualTimeScheduler } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { PayloadTypeGuesser, type PayloadTypeVerdict } from '../../src/telephony/PayloadTypeGuesser.js';

describe('PayloadTypeGuesser: an unmapped dynamic payload type told from its packets, on virtual time', () => {
  /** Feed packets as (arrival ms, payload bytes, timestamp step after it) and return the verdict. */
  function guess(packets: ReadonlyArray<{ at: number; payload: Uint8Array; step: number }>, pt = 97) {
    const scheduler = new VirtualTimeScheduler(undefined, Infinity);
    const verdicts: PayloadTypeVerdict<number>[] = [];
    const g = new PayloadTypeGuesser<number>(scheduler, (v) => verdicts.push(v));
    let ts = 1000;
    packets.forEach((p, i) => {
      scheduler.schedule(() => {
        g.observe(pt, 0x1234, (100 + i) & 0xffff, ts >>> 0, p.payload, i);
        ts += p.step;
      }, p.at);
    });
    scheduler.flush();
    g.stop();
    return verdicts;
  }
  const bytes = (n: number, first = 0): Uint8Array => new Uint8Array(n).fill(first);
  /** ffmpeg's L16 RTP: per 128 ms read, packets of 1460, 1460 and 1176 bytes at once. */
  const ffmpegL16 = Array.from({ length: 10 }, (_, burst) =>
    [1460, 1460, 1176].map((n, k) => ({ at: burst * 128 + k * 0.1 + (burst % 2) * 2, payload: bytes(n), step: n / 2 })),
  ).flat();

  it.each([
    ['ffmpeg -c:a pcm_s16be -ar 16000 -f rtp (bursts of three every 128 ms)', ffmpegL16, 'L16/16000/1'],
    ['20 ms packets of 16 kHz mono (640 bytes)', Array.from({ length: 12 }, (_, i) => ({ at: i * 20 + (i % 3), payload: bytes(640), step: 320 })), 'L16/16000/1'],
    ['20 ms packets of 8 kHz mono (320 bytes)', Array.from({ length: 12 }, (_, i) => ({ at: i * 20, payload: bytes(320), step: 160 })), 'L16/8000/1'],
    ['20 ms packets of 48 kHz stereo (3840 bytes)', Array.from({ length: 40 }, (_, i) => ({ at: i * 20, payload: bytes(3840), step: 960 })), 'L16/48000/2'],
    // TOC 0x78: CELT 20 ms, one frame: 960 samples at 48 kHz.
    ['Opus, 20 ms CELT frames', Array.from({ length: 5 }, (_, i) => ({ at: i * 20, payload: bytes(80 + i, 0x78), step: 960 })), 'opus/48000/2'],
  ] as const)('%s → %s', (_name, packets, mapping) => {
    const verdicts = guess(packets);
    expect(verdicts).toHaveLength(1);
    expect(verdicts[0]).toMatchObject({ kind: 'mapped', mapping });
    // Every packet held until then is handed back in order, to be played.
    const held = (verdicts[0] as { readonly held: readonly number[] }).held;
    expect(held).toEqual(held.map((_, i) => i));
  });

  it('packets that are neither L16 nor Opus: unknown, with why, and what was held is counted as dropped', () => {
    const v = guess(Array.from({ length: 5 }, (_, i) => ({ at: i * 20, payload: bytes(33, 0x01), step: 160 })));
    expect(v).toEqual([{ kind: 'unknown', payloadType: 97, reason: expect.stringMatching(/neither L16 .* nor Opus/), dropped: 3 }]);
  });

  it('a sender that does not pace its packets names no rate: unknown after 3 s of virtual time', () => {
    const v = guess(Array.from({ length: 30 }, (_, i) => ({ at: i * 0.01, payload: bytes(640), step: 320 })));
    expect(v).toEqual([{ kind: 'unknown', payloadType: 97, reason: expect.stringMatching(/named no rate within 3 s/), dropped: 30 }]);
  });

  it('a static payload type it does not decode (G.729, 18) is unknown at once', () => {
    const v = guess([{ at: 0, payload: bytes(20), step: 160 }], 18);
    expect(v).toEqual([{ kind: 'unknown', payloadType: 18, reason: expect.stringMatching(/static payload type/), dropped: 1 }]);
  });
});
