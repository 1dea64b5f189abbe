import { execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { OggOpusWriter, parsePayloadTypeArg, resolvePayloadType } from 'svc-stream/telephony';
import { VirtualTimeScheduler } from 'rxjs';
import { opusPacketSamples, PayloadTypeGuesser, type PayloadTypeVerdict } from '../../src/telephony/payloadTypes.js';
import { TrackInterleaver } from '../../src/telephony/trackInterleaver.js';

describe('resolvePayloadType', () => {
  it.each([
    [0, {}, 'PCMU', { kind: 'raw', format: { audio_format: 'mulaw', sample_rate: 8000, num_channels: 1 } }],
    [8, {}, 'PCMA', { kind: 'raw', format: { audio_format: 'alaw', sample_rate: 8000, num_channels: 1 } }],
    [10, {}, 'L16', { kind: 'raw', format: { audio_format: 's16be', sample_rate: 44100, num_channels: 2 } }],
    [96, { 96: { codec: 'L16', rate: 16000 } }, 'L16', { kind: 'raw', format: { audio_format: 's16be', sample_rate: 16000, num_channels: 1 } }],
    [96, { 96: { codec: 'l16', rate: 12000 } }, 'L16', { kind: 'ffmpeg', format: { audio_format: 's16le', sample_rate: 16000, num_channels: 1 } }],
    [9, {}, 'G722', { kind: 'ffmpeg', format: { audio_format: 's16le', sample_rate: 16000, num_channels: 1 } }],
    [97, { 97: { codec: 'opus' } }, 'opus', { kind: 'ogg' }],
  ] as const)('PT %i %j is %s', (pt, map, name, route) => {
    const c = resolvePayloadType(pt, map)!;
    expect(c.name).toBe(name);
    expect(c.route).toMatchObject(route);
  });

  it('knows comfort noise and DTMF as non-audio, and nothing of an unmapped dynamic type', () => {
    expect(resolvePayloadType(13)!.kind).toBe('cn');
    expect(resolvePayloadType(101)!.kind).toBe('dtmf');
    expect(resolvePayloadType(110, { 110: { codec: 'telephone-event' } })!.kind).toBe('dtmf');
    expect(resolvePayloadType(96)).toBeUndefined();
  });

  it('sizes payloads and silence per codec', () => {
    const l16 = resolvePayloadType(11)!;
    expect(l16.samplesOf(new Uint8Array(1764))).toBe(882);
    expect([...l16.silence(2)]).toEqual([0, 0, 0, 0]);
    expect([...resolvePayloadType(0)!.silence(3)]).toEqual([0xff, 0xff, 0xff]);
    expect([...resolvePayloadType(8)!.silence(2)]).toEqual([0xd5, 0xd5]);
  });
});

describe('parsePayloadTypeArg', () => {
  it.each([
    ['96=L16/16000', [96, { codec: 'L16', rate: 16000 }]],
    ['97=opus/48000/2', [97, { codec: 'opus', rate: 48000, channels: 2 }]],
    ['101=telephone-event', [101, { codec: 'telephone-event' }]],
  ])('%s', (arg, expected) => expect(parsePayloadTypeArg(arg)).toEqual(expected));

  it.each(['96', '200=PCMU', '96=speex', 'x=PCMU'])('refuses %s', (arg) => expect(() => parsePayloadTypeArg(arg)).toThrow(/payload-type/));
});

describe('opusPacketSamples', () => {
  it.each([
    [[0xf8], 960], // CELT 20 ms, one frame
    [[0xf9], 1920], // two frames
    [[0xfb, 0x03], 2880], // code 3, three frames
    [[0x08], 960], // SILK 20 ms
    [[0xe0], 120], // CELT 2.5 ms
  ])('%j → %i', (bytes, n) => expect(opusPacketSamples(new Uint8Array(bytes))).toBe(n));
});

describe('OggOpusWriter', () => {
  it('writes a stream ffmpeg decodes, lost packets concealed at their length', () => {
    const ogg = new OggOpusWriter();
    // A TOC byte without frame data is a lost 20 ms frame: the decoder conceals it, so 50 make 1 s.
    const pages = [...ogg.packet(new Uint8Array([0xf8])), ...ogg.gap(960 * 49)];
    const dir = mkdtempSync(join(tmpdir(), 'ogg-'));
    writeFileSync(join(dir, 'a.ogg'), Buffer.concat(pages));
    const pcm = execFileSync('ffmpeg', ['-hide_banner', '-loglevel', 'error', '-i', join(dir, 'a.ogg'), '-f', 's16le', '-ar', '48000', '-ac', '1', '-']);
    expect(pcm.byteLength).toBe(2 * 48000);
  });
});

describe('TrackInterleaver', () => {
  it('pairs samples, waits for the other track, pads at the end', () => {
    const t = new TrackInterleaver(0xff, 4);
    expect([...t.push(0, new Uint8Array([1, 2, 3]))]).toEqual([]);
    expect([...t.push(1, new Uint8Array([9, 8]))]).toEqual([1, 9, 2, 8]);
    expect([...t.end()]).toEqual([3, 0xff]);
  });

  it('pads a track that falls more than maxSkew behind', () => {
    const t = new TrackInterleaver(0xff, 2);
    expect([...t.push(0, new Uint8Array([1, 2, 3, 4]))]).toEqual([1, 0xff, 2, 0xff]);
  });
});

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
