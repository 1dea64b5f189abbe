import { readFileSync } from 'node:fs';
import { VirtualTimeScheduler } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { alawEncode, mulawDecode } from '../../src/audio/g711.js';
import { PayloadTypeGuesser, type PayloadTypeVerdict } from '../../src/telephony/PayloadTypeGuesser.js';
import { SAMPLE_MULAW } from './helpers.js';

/** Speech: the sample call as μ-law, as A-law, as L16 (big-endian), from 2 s in. */
const MULAW = readFileSync(SAMPLE_MULAW).subarray(16_000);
const PCM = mulawDecode(MULAW);
const ALAW = alawEncode(PCM);
const L16BE = new Uint8Array(PCM.length * 2);
PCM.forEach((x, i) => {
  L16BE[2 * i] = (x >> 8) & 0xff;
  L16BE[2 * i + 1] = x & 0xff;
});
/** Two channels of `mono` side by side, the second 0.3 s later in the call (another voice, as it were). */
function stereo(mono: Uint8Array): Uint8Array {
  const out = new Uint8Array(mono.length * 2);
  for (let i = 0; i < mono.length; i++) {
    out[2 * i] = mono[i]!;
    out[2 * i + 1] = mono[(i + 2400) % mono.length]!;
  }
  return out;
}

/**
 * Packets cut from `audio` in ffmpeg's bursts: every \`periodMs\`, the sizes in \`burst\` at once
 * (ffmpeg's G.711 at 16 kHz: 1460 + 26 bytes every 93 ms), each stepping the timestamp by its
 * length over \`bytesPerTick\`.
 */
function bursts(audio: Uint8Array, burst: readonly number[], periodMs: number, count: number, bytesPerTick: number) {
  let at = 0;
  const packets: Array<{ at: number; payload: Uint8Array; step: number }> = [];
  for (let b = 0; b < count; b++) {
    burst.forEach((n, k) => {
      packets.push({ at: b * periodMs + k * 0.3 + (b % 2), payload: audio.subarray(at, at + n), step: n / bytesPerTick });
      at += n;
    });
  }
  return packets;
}

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
    // ffmpeg -i conv.wav -f rtp (a 16 kHz wav, nothing else said): a=rtpmap:97 PCMU/16000/1.
    ["ffmpeg's plain default for a 16 kHz wav: PCMU, bursts of 1460 + 26 bytes every 93 ms", bursts(MULAW, [1460, 26], 93, 12, 1), 'PCMU/16000/1'],
    ['ffmpeg -c:a pcm_alaw -ar 16000: the same bursts of A-law', bursts(ALAW, [1460, 26], 93, 12, 1), 'PCMA/16000/1'],
    ['20 ms packets of 8 kHz μ-law on a dynamic type (a PBX)', bursts(MULAW, [160], 20, 20, 1), 'PCMU/8000/1'],
    ['20 ms packets of 8 kHz A-law', bursts(ALAW, [160], 20, 20, 1), 'PCMA/8000/1'],
    // Two bytes per tick: L16 mono or two G.711 channels, told by the samples.
    // ffmpeg -i stereo-44k.wav -f rtp: 1460 + 588 bytes (1024 ticks) every 23.2 ms.
    ["ffmpeg's default for a 44.1 kHz stereo wav: PCMU/44100/2", bursts(stereo(MULAW), [1460, 588], 1024 / 44.1, 40, 2), 'PCMU/44100/2'],
    ['L16 mono speech (two bytes per tick, as two G.711 channels would be)', bursts(L16BE, [640], 20, 20, 2), 'L16/16000/1'],
    ['digital silence in μ-law (0xff)', Array.from({ length: 12 }, (_, i) => ({ at: i * 20, payload: bytes(160, 0xff), step: 160 })), 'PCMU/8000/1'],
    ['digital silence in A-law (0xd5)', Array.from({ length: 12 }, (_, i) => ({ at: i * 20, payload: bytes(160, 0xd5), step: 160 })), 'PCMA/8000/1'],
  ] as const)('%s → %s', (_name, packets, mapping) => {
    const verdicts = guess(packets);
    expect(verdicts).toHaveLength(1);
    expect(verdicts[0]).toMatchObject({ kind: 'mapped', mapping });
    // Every packet held until then is handed back in order, to be played.
    const held = (verdicts[0] as { readonly held: readonly number[] }).held;
    expect(held).toEqual(held.map((_, i) => i));
    // Told well within the first second of the stream (by its own clock, not the wall's).
    const heldMs = packets.slice(0, held.length).reduce((ms, p) => Math.max(ms, p.at), 0);
    expect(heldMs).toBeLessThan(1000);
  });

  it('says by what it told a G.711 stream: the bytes per tick, the pace, the law', () => {
    const [v] = guess(bursts(MULAW, [1460, 26], 93, 12, 1));
    expect(v).toMatchObject({ kind: 'mapped', evidence: '1 byte per timestamp tick, paced at 16000 Hz, μ-law by its samples' });
  });

  it('packets that are none of G.711, L16 or Opus: unknown, with why, and what was held is counted as dropped', () => {
    const v = guess(Array.from({ length: 5 }, (_, i) => ({ at: i * 20, payload: bytes(33, 0x01), step: 160 })));
    expect(v).toEqual([{ kind: 'unknown', payloadType: 97, reason: expect.stringMatching(/neither G\.711 .*, L16 .* nor Opus/), dropped: 3 }]);
  });

  it('noise that reads alike as μ-law and A-law: unknown, naming both, once its samples are all in', () => {
    let seed = 7;
    const noise = Uint8Array.from({ length: 16_000 }, () => (seed = (seed * 1103515245 + 12345) >>> 0) >>> 24);
    const v = guess(bursts(noise, [160], 20, 80, 1));
    expect(v).toEqual([{ kind: 'unknown', payloadType: 97, reason: expect.stringMatching(/PCMU or PCMA could not be told apart$/), dropped: expect.any(Number) }]);
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
