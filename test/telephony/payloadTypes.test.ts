import { execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { OggOpusWriter, parsePayloadTypeArg, resolvePayloadType } from 'svc-stream/telephony';
import { opusPacketSamples } from '../../src/telephony/payloadTypes.js';
import { TrackInterleaver } from '../../src/telephony/TrackInterleaver.js';

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
