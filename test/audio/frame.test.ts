import { from, lastValueFrom, Observable, toArray } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { InputError } from '../../src/errors.js';
import { bytesPerFrame, RAW_FORMATS, type RawAudioFormat } from '../../src/schema/audio.js';
import { FlowControl } from '../../src/audio/flow.js';
import { audioMetaOf, frame, frameBytes, fromAsyncIterable, withAudioMeta } from 'svc-stream';

const counting = (n: number, offset = 0): Uint8Array => Uint8Array.from({ length: n }, (_, i) => (i + offset) & 0xff);

/** Split `bytes` into chunks of the given (cycled) sizes. */
function split(bytes: Uint8Array, sizes: readonly number[]): Uint8Array[] {
  const out: Uint8Array[] = [];
  let at = 0;
  for (let i = 0; at < bytes.length; i++) {
    const n = sizes[i % sizes.length]!;
    out.push(bytes.subarray(at, at + n));
    at += n;
  }
  return out;
}

describe('frameBytes', () => {
  it('is whole sample frames for every raw format and rate', () => {
    for (const audio_format of RAW_FORMATS) {
      for (const sample_rate of [8000, 16000, 44100, 48000] as const) {
        for (const num_channels of [1, 2, 6]) {
          const format = { audio_format, sample_rate, num_channels };
          const size = frameBytes(format, 20);
          expect(size % bytesPerFrame(format)).toBe(0);
          expect(size / bytesPerFrame(format)).toBe((sample_rate * 20) / 1000);
        }
      }
    }
  });

  it('rounds down when ms falls between samples, and says so in the size', () => {
    expect(frameBytes({ audio_format: 's16le', sample_rate: 11025, num_channels: 1 }, 20)).toBe(220 * 2); // 220.5 samples
    expect(frameBytes({ audio_format: 's24le', sample_rate: 44100, num_channels: 2 }, 70)).toBe(3087 * 6); // no float shortfall
  });

  it('refuses a duration with no whole sample or a non-positive one', () => {
    const fmt: RawAudioFormat = { audio_format: 's16le', sample_rate: 8000, num_channels: 1 };
    expect(() => frameBytes(fmt, 0.1)).toThrow(InputError);
    expect(() => frameBytes(fmt, 0)).toThrow(/positive/);
    expect(() => frame({ ms: -5 })).toThrow(InputError);
  });
});

describe('frame', () => {
  const cases: Array<[RawAudioFormat, number]> = [
    [{ audio_format: 's16le', sample_rate: 16000, num_channels: 1 }, 20],
    [{ audio_format: 'mulaw', sample_rate: 8000, num_channels: 1 }, 20],
    [{ audio_format: 's24be', sample_rate: 44100, num_channels: 2 }, 100],
    [{ audio_format: 'f32le', sample_rate: 48000, num_channels: 6 }, 10],
    [{ audio_format: 'u8', sample_rate: 11025, num_channels: 1 }, 20],
    [{ audio_format: 'f64be', sample_rate: 96000, num_channels: 8 }, 5],
  ];
  for (const [format, ms] of cases) {
    it(`cuts ${format.audio_format} ${format.sample_rate} Hz x${format.num_channels} into exact ${ms} ms frames and flushes the rest`, async () => {
      const size = frameBytes(format, ms);
      const total = size * 7 + bytesPerFrame(format) * 3 + 1; // a partial frame, even a partial sample
      const bytes = counting(total);
      const out = await lastValueFrom(from(split(bytes, [1, size - 1, 3 * size + 5, 7, size, 2 * size - 3])).pipe(frame({ ms, format }), toArray()));
      expect(out.slice(0, -1).every((c) => c.byteLength === size)).toBe(true);
      expect(out.at(-1)!.byteLength).toBe(bytesPerFrame(format) * 3 + 1);
      expect(out).toHaveLength(8);
      // Nothing lost, duplicated or reordered.
      expect(Buffer.concat(out).equals(bytes)).toBe(true);
    });
  }

  it('reads the format from the source and keeps it', async () => {
    const format: RawAudioFormat = { audio_format: 's16le', sample_rate: 8000, num_channels: 1 };
    const src = withAudioMeta(from([counting(1000)]), { format });
    const framed = src.pipe(frame({ ms: 20 }));
    expect(audioMetaOf(framed)?.format).toEqual(format);
    const out = await lastValueFrom(framed.pipe(toArray()));
    expect(out.map((c) => c.byteLength)).toEqual([320, 320, 320, 40]);
  });

  it('errors on subscribe without a raw format', async () => {
    const err = await lastValueFrom(withAudioMeta(from([counting(10)]), { format: { audio_format: 'wav' } }).pipe(frame())).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(InputError);
    expect((err as InputError).code).toBe('invalid_argument');
  });

  it('emits nothing extra for an empty stream and passes errors through', async () => {
    const format: RawAudioFormat = { audio_format: 's16le', sample_rate: 8000, num_channels: 1 };
    expect(await lastValueFrom(from([] as Uint8Array[]).pipe(frame({ format }), toArray()))).toEqual([]);
    const boom = new Error('boom');
    const failing = new Observable<Uint8Array>((s) => {
      s.next(counting(10));
      s.error(boom);
    });
    await expect(lastValueFrom(failing.pipe(frame({ format })))).rejects.toBe(boom);
  });

  it('is linear: 200 000 1-byte chunks frame quickly', async () => {
    const format: RawAudioFormat = { audio_format: 's16le', sample_rate: 16000, num_channels: 1 };
    const one = new Uint8Array(1);
    const t0 = performance.now();
    let frames = 0;
    let bytes = 0;
    await new Promise<void>((resolve) => {
      new Observable<Uint8Array>((s) => {
        for (let i = 0; i < 200_000; i++) s.next(one);
        s.complete();
      })
        .pipe(frame({ ms: 20, format }))
        .subscribe({ next: (c) => { frames++; bytes += c.byteLength; }, complete: resolve });
    });
    expect(bytes).toBe(200_000);
    expect(frames).toBe(Math.ceil(200_000 / 640));
    expect(performance.now() - t0).toBeLessThan(1000);
  });

  it('hands the session flow control through to a pull source', async () => {
    const format: RawAudioFormat = { audio_format: 's16le', sample_rate: 16000, num_channels: 1 };
    let pulled = 0;
    async function* gen() {
      for (let i = 0; i < 100; i++) {
        pulled++;
        yield counting(1000);
      }
    }
    const framed = fromAsyncIterable(gen(), { format }).pipe(frame({ ms: 20 }));
    const flow = new FlowControl();
    audioMetaOf(framed)!.flow!.current = flow;
    let got = 0;
    let pausedOnce = false;
    const sub = framed.subscribe((c) => {
      got += c.byteLength;
      if (got >= 5000 && !pausedOnce) {
        pausedOnce = true;
        flow.pause();
      }
    });
    await new Promise((r) => setTimeout(r, 50));
    expect(pulled).toBeLessThanOrEqual(7);
    flow.resume();
    await new Promise((r) => setTimeout(r, 50));
    expect(pulled).toBe(100);
    expect(got).toBe(100_000);
    sub.unsubscribe();
  });
});
