// parseWavHeader: the raw format inside a WAV stream from its first bytes, for a resumed session.
import { describe, expect, it } from 'vitest';
import { parseWavHeader } from '../../src/audio/wavHeader.js';

/** A RIFF/WAVE header: a `fmt ` chunk (PCM or extensible), optional chunks before `data`. */
function wav(o: { code?: number; channels?: number; rate?: number; bits?: number; extensible?: number; before?: Array<[string, number]> } = {}): Uint8Array {
  const { code = 1, channels = 1, rate = 16000, bits = 16 } = o;
  const parts: Buffer[] = [Buffer.from('RIFF\0\0\0\0WAVE', 'latin1')];
  const fmt = Buffer.alloc(o.extensible !== undefined ? 40 : 16);
  fmt.writeUInt16LE(o.extensible !== undefined ? 0xfffe : code, 0);
  fmt.writeUInt16LE(channels, 2);
  fmt.writeUInt32LE(rate, 4);
  fmt.writeUInt32LE((rate * channels * bits) / 8, 8);
  fmt.writeUInt16LE((channels * bits) / 8, 12);
  fmt.writeUInt16LE(bits, 14);
  if (o.extensible !== undefined) fmt.writeUInt16LE(o.extensible, 24);
  parts.push(chunk('fmt ', fmt));
  for (const [id, size] of o.before ?? []) parts.push(chunk(id, Buffer.alloc(size)));
  parts.push(chunk('data', Buffer.alloc(0), 1000));
  return Buffer.concat(parts);
}
function chunk(id: string, body: Buffer, declared = body.length): Buffer {
  const head = Buffer.alloc(8);
  head.write(id, 0, 'latin1');
  head.writeUInt32LE(declared, 4);
  return Buffer.concat([head, body, Buffer.alloc(body.length % 2)]);
}

describe('parseWavHeader', () => {
  it('reads the raw format and where the samples begin', () => {
    const bytes = wav({ channels: 2, rate: 44100 });
    expect(parseWavHeader(bytes)).toEqual({ format: { audio_format: 's16le', sample_rate: 44100, num_channels: 2 }, dataOffset: bytes.length });
  });

  it('maps each PCM, float and G.711 code to its raw format', () => {
    const cases: Array<[number, number, string]> = [[1, 8, 'u8'], [1, 16, 's16le'], [1, 24, 's24le'], [1, 32, 's32le'], [3, 32, 'f32le'], [3, 64, 'f64le'], [6, 8, 'alaw'], [7, 8, 'mulaw']];
    for (const [code, bits, format] of cases) expect(parseWavHeader(wav({ code, bits, rate: 8000 })), `${code}/${bits}`).toMatchObject({ format: { audio_format: format } });
  });

  it('reads the real code of WAVE_FORMAT_EXTENSIBLE, and skips chunks before data (odd sizes padded)', () => {
    const bytes = wav({ extensible: 3, bits: 32, before: [['LIST', 25], ['fact', 4]] });
    expect(parseWavHeader(bytes)).toEqual({ format: { audio_format: 'f32le', sample_rate: 16000, num_channels: 1 }, dataOffset: bytes.length });
  });

  it("says 'more' while the header is incomplete, at every cut", () => {
    const bytes = wav({ before: [['LIST', 10]] });
    for (let n = 0; n < bytes.length; n++) expect(parseWavHeader(bytes.subarray(0, n)), `${n} bytes`).toBe('more');
  });

  it('refuses what it cannot resume: not RIFF/WAVE, compressed, an unlisted rate, data before fmt, no data in 64 KiB', () => {
    expect(parseWavHeader(Buffer.from('OggS\0\0\0\0\0\0\0\0\0\0\0\0', 'latin1'))).toBeUndefined();
    expect(parseWavHeader(wav({ code: 2 }))).toBeUndefined(); // ADPCM
    expect(parseWavHeader(wav({ bits: 12 }))).toBeUndefined();
    expect(parseWavHeader(wav({ rate: 12345 }))).toBeUndefined();
    expect(parseWavHeader(Buffer.concat([Buffer.from('RIFF\0\0\0\0WAVE', 'latin1'), chunk('data', Buffer.alloc(0), 10)]))).toBeUndefined();
    const long = Buffer.concat([Buffer.from(wav().subarray(0, 36)), chunk('junk', Buffer.alloc(70_000))]);
    expect(parseWavHeader(long)).toBeUndefined();
  });
});
