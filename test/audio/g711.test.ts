import { from, lastValueFrom, toArray } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { InputError } from '../../src/errors/index.js';
import { RAW_FORMAT_DESCRIPTORS, type RawAudioFormat } from '../../src/schema/audio.js';
import { alawDecode, alawEncode, mulawDecode, mulawEncode, s16leBytes, s16leSamples } from '../../src/audio/g711.js';
import { audioMetaOf, decodeG711, encodeG711, fromG711, toG711 } from 'svc-stream';
import { withAudioMeta } from '../../src/audio/meta.js';

const sine = (n: number): Int16Array => Int16Array.from({ length: n }, (_, i) => Math.round(20000 * Math.sin((2 * Math.PI * 440 * i) / 8000)));

describe('G.711 codecs', () => {
  it('encodes silence to the silence bytes of the format descriptors', () => {
    expect(mulawEncode(new Int16Array([0]))[0]).toBe(RAW_FORMAT_DESCRIPTORS.mulaw.silence[0]);
    expect(alawEncode(new Int16Array([0]))[0]).toBe(RAW_FORMAT_DESCRIPTORS.alaw.silence[0]);
  });

  for (const [law, enc, dec] of [['mulaw', mulawEncode, mulawDecode], ['alaw', alawEncode, alawDecode]] as const) {
    it(`${law} round-trips within the companding error`, () => {
      const x = sine(8000);
      const y = dec(enc(x));
      expect(y).toHaveLength(x.length);
      for (let i = 0; i < x.length; i++) {
        // G.711 keeps about 4 significant bits of mantissa: error under 1/16 of the magnitude (plus a floor).
        expect(Math.abs(y[i]! - x[i]!)).toBeLessThanOrEqual(Math.abs(x[i]!) / 16 + 16);
      }
    });
  }

  it('reads and writes s16le bytes, also from an odd byte offset', () => {
    const bytes = new Uint8Array([0, 0x34, 0x12, 0xff, 0xff]);
    expect(Array.from(s16leSamples(bytes.subarray(1)))).toEqual([0x1234, -1]);
    expect(Array.from(s16leBytes(new Int16Array([0x1234, -2])))).toEqual([0x34, 0x12, 0xfe, 0xff]);
    expect(() => s16leSamples(new Uint8Array(3))).toThrow(InputError);
  });

  it('encodeG711/decodeG711 work on s16le buffers', () => {
    const pcm = s16leBytes(sine(160));
    for (const law of ['mulaw', 'alaw'] as const) {
      const g = encodeG711(law, pcm);
      expect(g.byteLength).toBe(160);
      expect(decodeG711(law, g).byteLength).toBe(320);
    }
  });
});

describe('toG711 / fromG711 operators', () => {
  const pcmFormat: RawAudioFormat = { audio_format: 's16le', sample_rate: 8000, num_channels: 1 };

  it('converts an s16le stream split at odd byte boundaries, and updates the format', async () => {
    const samples = sine(800);
    const pcm = s16leBytes(samples);
    const chunks = [pcm.subarray(0, 3), pcm.subarray(3, 4), pcm.subarray(4, 101), pcm.subarray(101)];
    const source = withAudioMeta(from(chunks), { format: pcmFormat });
    const encoded = source.pipe(toG711('mulaw'));
    expect(audioMetaOf(encoded)?.format).toEqual({ audio_format: 'mulaw', sample_rate: 8000, num_channels: 1 });
    const out = Buffer.concat(await lastValueFrom(encoded.pipe(toArray())));
    expect(out).toEqual(Buffer.from(mulawEncode(samples)));

    const back = encoded.pipe(fromG711('mulaw'));
    expect(audioMetaOf(back)?.format).toEqual(pcmFormat);
    const decoded = Buffer.concat(await lastValueFrom(back.pipe(toArray())));
    expect(decoded).toEqual(Buffer.from(s16leBytes(mulawDecode(mulawEncode(samples)))));
  });

  it('A-law both ways', async () => {
    const pcm = s16leBytes(sine(400));
    const out = await lastValueFrom(from([pcm]).pipe(toG711('alaw'), fromG711('alaw'), toArray()));
    expect(Buffer.concat(out).byteLength).toBe(800);
  });

  it('refuses input the source says is another format', async () => {
    const wrong = withAudioMeta(from([new Uint8Array(4)]), { format: { audio_format: 'f32le', sample_rate: 8000, num_channels: 1 } });
    await expect(lastValueFrom(wrong.pipe(toG711('mulaw')))).rejects.toMatchObject({ code: 'invalid_argument' });
    await expect(lastValueFrom(wrong.pipe(fromG711('alaw')))).rejects.toBeInstanceOf(InputError);
  });
});
