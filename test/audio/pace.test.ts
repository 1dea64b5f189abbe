import { from, Observable, Subject, VirtualAction, VirtualTimeScheduler, type SchedulerAction, type SchedulerLike, type Subscription } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { InputError } from '../../src/errors/index.js';
import type { RawAudioFormat } from '../../src/schema/audio.js';
import { audioMetaOf, fromAsyncIterable, pace } from 'svc-stream';
import { withAudioMeta } from '../../src/audio/meta.js';

const S16_16K: RawAudioFormat = { audio_format: 's16le', sample_rate: 16000, num_channels: 1 }; // 32 bytes per ms

/** A scheduler whose timers all fire `lateMs` late, like a busy event loop. */
function late(inner: VirtualTimeScheduler, lateMs: number): SchedulerLike {
  return {
    now: () => inner.now(),
    schedule<T>(work: (this: SchedulerAction<T>, state?: T) => void, delay = 0, state?: T): Subscription {
      return inner.schedule(work, delay + lateMs, state);
    },
  };
}

function record(source: Observable<Uint8Array>, scheduler: SchedulerLike): { times: number[]; sizes: number[]; done: () => number | undefined } {
  const times: number[] = [];
  const sizes: number[] = [];
  let completedAt: number | undefined;
  source.subscribe({
    next: (c) => {
      times.push(scheduler.now());
      sizes.push(c.byteLength);
    },
    complete: () => (completedAt = scheduler.now()),
  });
  return { times, sizes, done: () => completedAt };
}

describe('pace', () => {
  it('paces an hour of 100 ms chunks on absolute deadlines with no drift (virtual time)', () => {
    const scheduler = new VirtualTimeScheduler(VirtualAction, Infinity);
    const chunk = new Uint8Array(3200); // 100 ms; the same buffer 36 000 times
    const hour = from(new Array<Uint8Array>(36_000).fill(chunk));
    const r = record(hour.pipe(pace({ format: S16_16K, scheduler })), scheduler);
    scheduler.flush();
    expect(r.times).toHaveLength(36_000);
    let worst = 0;
    r.times.forEach((t, k) => (worst = Math.max(worst, Math.abs(t - k * 100))));
    expect(worst).toBeLessThan(1e-3);
    expect(Math.abs(r.done()! - 3_600_000)).toBeLessThan(1);
  });

  it('does not accumulate timer lateness: 5 ms late timers still end within 5 ms of an hour', () => {
    const virtual = new VirtualTimeScheduler(VirtualAction, Infinity);
    const scheduler = late(virtual, 5);
    const hour = from(new Array<Uint8Array>(36_000).fill(new Uint8Array(3200)));
    const r = record(hour.pipe(pace({ format: S16_16K, scheduler })), scheduler);
    virtual.flush();
    // Each chunk is at most one lateness behind its own deadline; a relative-delay pacer would end 180 s late.
    const worst = Math.max(...r.times.map((t, k) => t - k * 100));
    expect(worst).toBeLessThanOrEqual(5 + 1e-3);
    expect(r.done()! - 3_600_000).toBeLessThanOrEqual(5 + 1e-3);
    expect(r.done()! - 3_600_000).toBeGreaterThanOrEqual(0);
  });

  it('uses the cumulative byte count, whatever the chunk sizes, and honours the rate', () => {
    const scheduler = new VirtualTimeScheduler(VirtualAction, Infinity);
    const sizes = [320, 3200, 64, 32_000, 6400, 2];
    const r = record(from(sizes.map((n) => new Uint8Array(n))).pipe(pace({ format: S16_16K, rate: 2, scheduler })), scheduler);
    scheduler.flush();
    let before = 0;
    const expected = sizes.map((n) => {
      const t = before / 32 / 2;
      before += n;
      return t;
    });
    r.times.forEach((t, i) => expect(t).toBeCloseTo(expected[i]!, 6));
    expect(r.done()).toBeCloseTo(before / 32 / 2, 6);
  });

  it('starts the clock at the first chunk, not at subscription', () => {
    const scheduler = new VirtualTimeScheduler(VirtualAction, Infinity);
    const input = new Subject<Uint8Array>();
    const r = record(withAudioMeta(input.asObservable(), { format: S16_16K }).pipe(pace({ scheduler })), scheduler);
    scheduler.schedule(() => {
      input.next(new Uint8Array(3200));
      input.next(new Uint8Array(3200));
      input.complete();
    }, 500);
    scheduler.flush();
    expect(r.times).toEqual([500, 600]);
    expect(r.done()).toBe(700);
  });

  it('completes at once on an empty stream, passes errors through at once, and stops timers on unsubscribe', () => {
    const scheduler = new VirtualTimeScheduler(VirtualAction, Infinity);
    const empty = record(from([] as Uint8Array[]).pipe(pace({ format: S16_16K, scheduler })), scheduler);
    expect(empty.done()).toBe(0);

    const boom = new Error('boom');
    let error: unknown;
    new Observable<Uint8Array>((s) => {
      s.next(new Uint8Array(32_000));
      s.next(new Uint8Array(32_000));
      s.error(boom);
    })
      .pipe(pace({ format: S16_16K, scheduler }))
      .subscribe({ error: (e: unknown) => (error = e) });
    expect(error).toBe(boom);

    const emitted: number[] = [];
    const sub = from([new Uint8Array(3200), new Uint8Array(3200), new Uint8Array(3200)])
      .pipe(pace({ format: S16_16K, scheduler }))
      .subscribe(() => emitted.push(scheduler.now()));
    sub.unsubscribe();
    scheduler.flush();
    expect(emitted).toEqual([0]);
    expect(scheduler.actions).toHaveLength(0);
  });

  it('refuses a bad rate and a stream without a raw format', () => {
    expect(() => pace({ rate: 0 })).toThrow(InputError);
    let error: unknown;
    from([new Uint8Array(2)]).pipe(pace()).subscribe({ error: (e: unknown) => (error = e) });
    expect((error as InputError).code).toBe('invalid_argument');
  });

  it('keeps the format and pauses a pull upstream once enough audio waits (virtual time, 20x)', async () => {
    let pulled = 0;
    async function* gen() {
      for (let i = 0; i < 200; i++) {
        pulled++;
        yield new Uint8Array(3200); // 100 ms each, 20 s in all
      }
    }
    const scheduler = new VirtualTimeScheduler(VirtualAction, 0);
    const paced = fromAsyncIterable(gen(), { format: S16_16K }).pipe(pace({ rate: 20, maxBufferedMs: 1000, scheduler }));
    expect(audioMetaOf(paced)?.format).toEqual(S16_16K);
    let got = 0;
    const sub = paced.subscribe(() => got++);
    // Let the generator run as far as pace lets it, releasing what is due up to `ms` of virtual time.
    const runUntil = async (ms: number): Promise<void> => {
      scheduler.maxFrames = ms;
      for (let i = 0; i < 200; i++) {
        scheduler.flush();
        await new Promise((r) => setImmediate(r));
      }
    };
    await runUntil(0);
    // Only the first chunk is due; the source stops once 1 s of audio (10 chunks) waits.
    expect(got).toBe(1);
    expect(pulled).toBeLessThanOrEqual(got + 12);
    await runUntil(100);
    // 100 ms at 20x is 2 s of audio: the chunks starting at 0 … 2 s; at most 1 s held, plus one in flight.
    expect(got).toBe(21);
    expect(pulled).toBeGreaterThan(got);
    expect(pulled).toBeLessThanOrEqual(got + 12);
    sub.unsubscribe();
  });
});
