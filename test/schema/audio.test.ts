import { alaw, mulaw } from 'alawmulaw';
import { describe, expect, it } from 'vitest';
import { InputError, SvcError } from '../../src/errors/index.js';
import {
  CONTAINER_FORMATS,
  RAW_FORMAT_DESCRIPTORS,
  RAW_FORMATS,
  SAMPLE_RATES,
  bytesPerFrame,
  bytesPerSecond,
  bytesToMs,
  isRawFormat,
  msToBytes,
  type AudioFormat,
  type RawAudioFormat,
  type RawFormat,
} from '../../src/schema/audio.js';
import { checkAudioParams } from '../../src/session/url.js';

/** §4.3, copied so a change to the source lists is caught. */
const CONTRACT_RAW = [
  's8', 's16le', 's16be', 's24le', 's24be', 's32le', 's32be',
  'u8', 'u16le', 'u16be', 'u24le', 'u24be', 'u32le', 'u32be',
  'f32le', 'f32be', 'f64le', 'f64be', 'mulaw', 'alaw',
] as const;
const CONTRACT_RATES = [8000, 11025, 16000, 22050, 32000, 44100, 48000, 96000];
const CONTRACT_CONTAINERS = ['wav', 'mp3', 'ogg', 'flac', 'webm', 'aac', 'aiff'];

function refusal(format: unknown): InputError {
  try {
    checkAudioParams(format as AudioFormat);
  } catch (err) {
    expect(err).toBeInstanceOf(InputError);
    expect(err).toBeInstanceOf(SvcError);
    expect(err).toBeInstanceOf(Error);
    const e = err as InputError;
    expect(e.code).toBe('invalid_audio_params');
    expect(e.retryable).toBe(false);
    return e;
  }
  throw new Error(`checkAudioParams accepted ${JSON.stringify(format)}`);
}

describe('format lists', () => {
  it('match §4.3 and the wire reference exactly', () => {
    expect([...RAW_FORMATS]).toEqual([...CONTRACT_RAW]);
    expect([...SAMPLE_RATES]).toEqual(CONTRACT_RATES);
    expect([...CONTAINER_FORMATS].sort()).toEqual([...CONTRACT_CONTAINERS].sort());
  });
});

describe('checkAudioParams', () => {
  it('no format at all: nothing to send (auto-detect)', () => {
    expect(checkAudioParams(undefined)).toEqual({});
    expect(checkAudioParams({})).toEqual({});
  });

  it.each(CONTRACT_RAW)('raw %s with rate and channels → all three query parameters', (f) => {
    expect(checkAudioParams({ audio_format: f, sample_rate: 16000, num_channels: 1 })).toEqual({
      audio_format: f,
      sample_rate: '16000',
      num_channels: '1',
    });
  });

  it.each(CONTRACT_RAW)('raw %s without sample_rate is refused', (f) => {
    const e = refusal({ audio_format: f, num_channels: 1 });
    expect(e.path).toBe('sample_rate');
    expect(e.message).toMatch(/sample_rate/);
  });

  it.each(CONTRACT_RAW)('raw %s without num_channels is refused', (f) => {
    const e = refusal({ audio_format: f, sample_rate: 16000 });
    expect(e.path).toBe('num_channels');
    expect(e.message).toMatch(/num_channels/);
  });

  it.each(CONTRACT_RAW)('raw %s with neither is refused', (f) => {
    expect(['sample_rate', 'num_channels']).toContain(refusal({ audio_format: f }).path);
  });

  it.each(CONTRACT_RATES)('sample_rate %i accepted', (rate) => {
    expect(checkAudioParams({ audio_format: 's16le', sample_rate: rate as RawAudioFormat['sample_rate'], num_channels: 2 })).toEqual({
      audio_format: 's16le',
      sample_rate: String(rate),
      num_channels: '2',
    });
  });

  it.each([50000, 0, -16000, 16000.5, 44000, 192000, 8001, Number.NaN])('sample_rate %s refused', (rate) => {
    const e = refusal({ audio_format: 's16le', sample_rate: rate, num_channels: 1 });
    expect(e.path).toBe('sample_rate');
    expect(e.message).toContain('sample_rate');
  });

  it.each([1, 2, 3, 4, 5, 6, 7, 8])('num_channels %i accepted', (ch) => {
    expect(checkAudioParams({ audio_format: 'mulaw', sample_rate: 8000, num_channels: ch })).toEqual({
      audio_format: 'mulaw',
      sample_rate: '8000',
      num_channels: String(ch),
    });
  });

  it.each([0, 9, 1.5, -1, 12, Number.NaN])('num_channels %s refused', (ch) => {
    const e = refusal({ audio_format: 'mulaw', sample_rate: 8000, num_channels: ch });
    expect(e.path).toBe('num_channels');
    expect(e.message).toContain('num_channels');
  });

  it.each([
    ['sample_rate only', { sample_rate: 16000 }],
    ['num_channels only', { num_channels: 1 }],
    ['both', { sample_rate: 16000, num_channels: 1 }],
  ])('%s without audio_format is refused', (_what, format) => {
    const e = refusal(format);
    expect(e.path).toBe('audio_format');
    expect(e.message).toMatch(/require audio_format/);
  });

  it.each(CONTRACT_CONTAINERS)('container %s needs nothing else', (f) => {
    expect(checkAudioParams({ audio_format: f } as AudioFormat)).toEqual({ audio_format: f });
  });

  it("'opus' is refused, pointing at 'ogg'", () => {
    const e = refusal({ audio_format: 'opus' });
    expect(e.path).toBe('audio_format');
    expect(e.message).toContain("'ogg'");
  });

  it.each(['mp4', 'mov', 'pcm', 'WAV', 'S16LE', 's16', 'f16le', 'u8le', 'ulaw', 'm4a', ''])('%j is refused', (f) => {
    const e = refusal({ audio_format: f, sample_rate: 16000, num_channels: 1 });
    expect(e.path).toBe('audio_format');
  });

  it("'mp4' is refused with the service's wording", () => {
    expect(refusal({ audio_format: 'mp4' }).message).toMatch(/^Invalid audio_format='mp4'\. Valid values: \[/);
  });
});

/** Bytes per sample by bit depth, from the format name (§4.3 lists them; the size is the name). */
const EXPECTED_BYTES: Record<RawFormat, number> = {
  s8: 1, u8: 1, mulaw: 1, alaw: 1,
  s16le: 2, s16be: 2, u16le: 2, u16be: 2,
  s24le: 3, s24be: 3, u24le: 3, u24be: 3,
  s32le: 4, s32be: 4, u32le: 4, u32be: 4, f32le: 4, f32be: 4,
  f64le: 8, f64be: 8,
};

/** Decode one sample from its bytes, independently of the descriptor's own logic. */
function decodeSample(format: RawFormat, bytes: readonly number[]): number {
  const b = Buffer.from(bytes);
  if (format === 'mulaw') return mulaw.decodeSample(b[0]!);
  if (format === 'alaw') return alaw.decodeSample(b[0]!);
  const le = !format.endsWith('be');
  const n = b.length;
  switch (format[0]) {
    case 's': return le ? b.readIntLE(0, n) : b.readIntBE(0, n);
    case 'u': {
      const v = le ? b.readUIntLE(0, n) : b.readUIntBE(0, n);
      return v - 2 ** (n * 8 - 1); // centred
    }
    default: return n === 4 ? (le ? b.readFloatLE(0) : b.readFloatBE(0)) : le ? b.readDoubleLE(0) : b.readDoubleBE(0);
  }
}

describe('RAW_FORMAT_DESCRIPTORS', () => {
  it('has one descriptor per raw format', () => {
    expect(Object.keys(RAW_FORMAT_DESCRIPTORS).sort()).toEqual([...CONTRACT_RAW].sort());
  });

  it.each(CONTRACT_RAW)('%s: bytes per sample', (f) => {
    expect(RAW_FORMAT_DESCRIPTORS[f].format).toBe(f);
    expect(RAW_FORMAT_DESCRIPTORS[f].bytesPerSample).toBe(EXPECTED_BYTES[f]);
  });

  it.each(CONTRACT_RAW)('%s: silence is one sample long and decodes to (near) zero', (f) => {
    const d = RAW_FORMAT_DESCRIPTORS[f];
    expect(d.silence).toHaveLength(d.bytesPerSample);
    // A-law has no code for exactly 0: its two smallest codes decode to ±8 (0xD5 is +8).
    if (f === 'alaw') expect(Math.abs(decodeSample(f, d.silence))).toBeLessThanOrEqual(8);
    else expect(decodeSample(f, d.silence)).toBe(0);
  });

  it.each([
    ['u8', [0x80]],
    ['u16le', [0x00, 0x80]],
    ['u16be', [0x80, 0x00]],
    ['u24le', [0x00, 0x00, 0x80]],
    ['u24be', [0x80, 0x00, 0x00]],
    ['u32le', [0x00, 0x00, 0x00, 0x80]],
    ['u32be', [0x80, 0x00, 0x00, 0x00]],
    ['s8', [0]],
    ['s16le', [0, 0]],
    ['s24be', [0, 0, 0]],
    ['f32le', [0, 0, 0, 0]],
    ['f64be', [0, 0, 0, 0, 0, 0, 0, 0]],
    ['mulaw', [0xff]],
    ['alaw', [0xd5]],
  ] as const)('%s silence bytes are %j (unsigned centred on half range)', (f, bytes) => {
    expect(RAW_FORMAT_DESCRIPTORS[f].silence).toEqual(bytes);
  });

  it.each(CONTRACT_RAW)('%s: encoding and endianness follow the name', (f) => {
    const d = RAW_FORMAT_DESCRIPTORS[f];
    const encoding = f === 'mulaw' || f === 'alaw' ? f : f[0] === 's' ? 'signed' : f[0] === 'u' ? 'unsigned' : 'float';
    expect(d.encoding).toBe(encoding);
    expect(d.endianness).toBe(f.endsWith('le') ? 'le' : f.endsWith('be') ? 'be' : 'none');
  });
});

describe('frame arithmetic', () => {
  it.each(CONTRACT_RAW.flatMap((f) => [1, 2, 8].map((ch) => [f, ch] as const)))('bytesPerFrame(%s, %i channels)', (f, ch) => {
    expect(bytesPerFrame({ audio_format: f, sample_rate: 16000, num_channels: ch })).toBe(EXPECTED_BYTES[f] * ch);
  });

  it.each([
    [{ audio_format: 's16le', sample_rate: 16000, num_channels: 1 }, 32_000, 1000],
    [{ audio_format: 's16le', sample_rate: 16000, num_channels: 1 }, 320, 10],
    [{ audio_format: 'mulaw', sample_rate: 8000, num_channels: 1 }, 160, 20],
    [{ audio_format: 's24le', sample_rate: 48000, num_channels: 2 }, 288, 1],
    [{ audio_format: 'f32le', sample_rate: 44100, num_channels: 2 }, 352_800, 1000],
    [{ audio_format: 'f64be', sample_rate: 96000, num_channels: 8 }, 6_144_000, 1000],
    [{ audio_format: 'u8', sample_rate: 11025, num_channels: 1 }, 11_025 / 2, 500],
    [{ audio_format: 'alaw', sample_rate: 8000, num_channels: 1 }, 0, 0],
  ] as const)('bytesToMs(%j, %i) = %i', (format, bytes, ms) => {
    expect(bytesToMs(format as RawAudioFormat, bytes)).toBeCloseTo(ms, 9);
  });

  it('bytesPerSecond is bytesPerFrame × rate', () => {
    expect(bytesPerSecond({ audio_format: 's32be', sample_rate: 22050, num_channels: 3 })).toBe(4 * 3 * 22050);
  });

  it('isRawFormat tells raw from container and unknown', () => {
    for (const f of CONTRACT_RAW) expect(isRawFormat({ audio_format: f, sample_rate: 8000, num_channels: 1 })).toBe(true);
    for (const f of CONTRACT_CONTAINERS) expect(isRawFormat({ audio_format: f } as AudioFormat)).toBe(false);
    expect(isRawFormat({})).toBe(false);
    expect(isRawFormat(undefined)).toBe(false);
  });
});

describe('msToBytes', () => {
  it('is whole sample frames for every raw format and rate', () => {
    for (const audio_format of RAW_FORMATS) {
      for (const sample_rate of [8000, 16000, 44100, 48000] as const) {
        for (const num_channels of [1, 2, 6]) {
          const format = { audio_format, sample_rate, num_channels };
          const size = msToBytes(format, 20);
          expect(size % bytesPerFrame(format)).toBe(0);
          expect(size / bytesPerFrame(format)).toBe((sample_rate * 20) / 1000);
        }
      }
    }
  });

  it('rounds down when ms falls between samples, and is the inverse of bytesToMs on sample boundaries', () => {
    expect(msToBytes({ audio_format: 's16le', sample_rate: 11025, num_channels: 1 }, 20)).toBe(220 * 2); // 220.5 samples
    expect(msToBytes({ audio_format: 's24le', sample_rate: 44100, num_channels: 2 }, 70)).toBe(3087 * 6); // no float shortfall
    const fmt: RawAudioFormat = { audio_format: 'mulaw', sample_rate: 8000, num_channels: 1 };
    expect(bytesToMs(fmt, msToBytes(fmt, 100))).toBe(100);
  });

  it('refuses a duration with no whole sample or a non-positive one', () => {
    const fmt: RawAudioFormat = { audio_format: 's16le', sample_rate: 8000, num_channels: 1 };
    expect(() => msToBytes(fmt, 0.1)).toThrow(InputError);
    expect(() => msToBytes(fmt, 0)).toThrow(/positive/);
    expect(() => msToBytes(fmt, Number.NaN)).toThrow(InputError);
  });

  it('refuses a format that is not raw, with the path', () => {
    for (const bad of [{ audio_format: 'wav' }, { audio_format: 's16le', sample_rate: 0, num_channels: 1 }, { audio_format: 's16le', sample_rate: 8000, num_channels: 1.5 }, undefined]) {
      const err = (() => { try { msToBytes(bad as RawAudioFormat, 20); } catch (e) { return e; } return undefined; })();
      expect(err).toBeInstanceOf(InputError);
      expect((err as InputError).code).toBe('invalid_argument');
      expect((err as InputError).path).toBe('format');
    }
  });
});
