import { from, lastValueFrom, Observable, toArray } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { loopTurns } from '../internal/bounds.js';
import { InputError } from '../../src/errors/index.js';
import { bytesPerFrame, type RawAudioFormat } from '../../src/schema/audio.js';
import { FlowControl } from '../../src/audio/FlowControl.js';
import { withAudioMeta } from '../../src/audio/meta.js';
import { audioMetaOf, fromAsyncIterable, msToBytes, rechunk } from 'svc-stream';

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

describe('rechunk', () => {
  const cases: Array<[RawAudioFormat, number]> = [
    [{ audio_format: 's16le', sample_rate: 16000, num_channels: 1 }, 20],
    [{ audio_format: 'mulaw', sample_rate: 8000, num_channels: 1 }, 20],
    [{ audio_format: 's24be', sample_rate: 44100, num_channels: 2 }, 100],
    [{ audio_format: 'f32le', sample_rate: 48000, num_channels: 6 }, 10],
    [{ audio_format: 'u8', sample_rate: 11025, num_channels: 1 }, 20],
    [{ audio_format: 'f64be', sample_rate: 96000, num_channels: 8 }, 5],
  ];
  for (const [format, ms] of cases) {
    it(`cuts ${format.audio_format} ${format.sample_rate} Hz x${format.num_channels} into exact ${ms} ms chunks and flushes the rest`, async () => {
      const size = msToBytes(format, ms);
      const total = size * 7 + bytesPerFrame(format) * 3 + 1; // a partial chunk, even a partial sample
      const bytes = counting(total);
      const out = await lastValueFrom(from(split(bytes, [1, size - 1, 3 * size + 5, 7, size, 2 * size - 3])).pipe(rechunk({ ms, format }), toArray()));
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
    const framed = src.pipe(rechunk({ ms: 20 }));
    expect(audioMetaOf(framed)?.format).toEqual(format);
    const out = await lastValueFrom(framed.pipe(toArray()));
    expect(out.map((c) => c.byteLength)).toEqual([320, 320, 320, 40]);
  });

  it('errors on subscribe without a raw format', async () => {
    const err = await lastValueFrom(withAudioMeta(from([counting(10)]), { format: { audio_format: 'wav' } }).pipe(rechunk())).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(InputError);
    expect((err as InputError).code).toBe('invalid_argument');
  });

  it('emits nothing extra for an empty stream and passes errors through', async () => {
    const format: RawAudioFormat = { audio_format: 's16le', sample_rate: 8000, num_channels: 1 };
    expect(await lastValueFrom(from([] as Uint8Array[]).pipe(rechunk({ format }), toArray()))).toEqual([]);
    const boom = new Error('boom');
    const failing = new Observable<Uint8Array>((s) => {
      s.next(counting(10));
      s.error(boom);
    });
    await expect(lastValueFrom(failing.pipe(rechunk({ format })))).rejects.toBe(boom);
  });

  it('is linear: each byte is copied at most once, whole chunks inside a big one are views', async () => {
    const format: RawAudioFormat = { audio_format: 's16le', sample_rate: 16000, num_channels: 1 };
    // Count the bytes copied with Uint8Array#set (the only copy rechunk makes) while it runs.
    const set = Uint8Array.prototype.set;
    let copied = 0;
    Uint8Array.prototype.set = function (this: Uint8Array, array: ArrayLike<number>, offset?: number) {
      copied += array.length;
      return set.call(this, array, offset);
    } as typeof set;
    try {
      const one = new Uint8Array(1);
      const small = await lastValueFrom(new Observable<Uint8Array>((s) => {
        for (let i = 0; i < 200_000; i++) s.next(one);
        s.complete();
      }).pipe(rechunk({ ms: 20, format }), toArray()));
      expect(small.reduce((n, c) => n + c.byteLength, 0)).toBe(200_000);
      expect(small).toHaveLength(Math.ceil(200_000 / 640));
      expect(copied).toBe(200_000); // once each, never again as chunks fill
      copied = 0;
      const big = counting(640 * 100 + 10);
      const out = await lastValueFrom(from([big]).pipe(rechunk({ ms: 20, format }), toArray()));
      expect(out).toHaveLength(101);
      expect(out.slice(0, -1).every((c) => c.buffer === big.buffer)).toBe(true); // views, not copies
      expect(copied).toBe(10); // only the tail waits in a buffer of its own
    } finally {
      Uint8Array.prototype.set = set;
    }
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
    const framed = fromAsyncIterable(gen(), { format }).pipe(rechunk({ ms: 20 }));
    const flow = new FlowControl();
    audioMetaOf(framed)!.flow!.current = flow;
    let got = 0;
    let pausedOnce = false;
    let completed!: () => void;
    const done = new Promise<void>((resolve) => (completed = resolve));
    const sub = framed.subscribe({
      next: (c) => {
        got += c.byteLength;
        if (got >= 5000 && !pausedOnce) {
          pausedOnce = true;
          flow.pause();
        }
      },
      complete: () => completed(),
    });
    await loopTurns(20); // in memory: the pull loop would have moved on within a turn
    expect(pulled).toBeLessThanOrEqual(7); // paused: the generator is not read on
    flow.resume();
    await done;
    expect(pulled).toBe(100);
    expect(got).toBe(100_000);
    sub.unsubscribe();
  });
});
