import { describe, expect, it } from 'vitest';
import { loopTurns } from '../internal/bounds.js';
import { AudioSourceError } from '../../src/errors/index.js';
import { FlowControl } from '../../src/audio/FlowControl.js';
import { audioMetaOf, fromAsyncIterable } from 'svc-stream';
import { byteCount, collect, eventually, readWatchingTurns } from './fixtures.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('fromAsyncIterable', () => {
  it('is cold for a re-iterable source: each subscription reads from the start', async () => {
    const iterable = {
      async *[Symbol.asyncIterator]() {
        yield new Uint8Array([1, 2]);
        yield new Uint8Array([3]);
      },
    };
    const source = fromAsyncIterable(iterable);
    expect(byteCount(await collect(source))).toBe(3);
    expect(byteCount(await collect(source))).toBe(3);
  });

  it('pulls lazily: nothing before subscription, nothing while paused', async () => {
    let pulled = 0;
    async function* gen() {
      for (let i = 0; i < 1000; i++) {
        pulled++;
        yield new Uint8Array(100);
      }
    }
    const source = fromAsyncIterable(gen(), { format: { audio_format: 'wav' } });
    expect(audioMetaOf(source)?.format).toEqual({ audio_format: 'wav' });
    await sleep(10);
    expect(pulled).toBe(0);
    const flow = new FlowControl();
    audioMetaOf(source)!.flow!.current = flow;
    let got = 0;
    let done = false;
    source.subscribe({
      next: () => {
        got++;
        if (got === 10) flow.pause();
      },
      complete: () => (done = true),
    });
    // In memory, the pull loop moves on within a turn of the loop: 20 turns and it has stopped.
    await loopTurns(20);
    expect(got).toBe(10);
    expect(pulled).toBe(10);
    flow.resume();
    await eventually(() => done, 2000, 'completion');
    expect(got).toBe(1000);
  });

  it('runs the generator finally on unsubscribe, even while paused', async () => {
    let finished = false;
    async function* gen() {
      try {
        for (;;) yield new Uint8Array(1);
      } finally {
        finished = true;
      }
    }
    const flow = new FlowControl();
    const sub = fromAsyncIterable(gen(), { flow }).subscribe(() => flow.pause());
    await sleep(10);
    sub.unsubscribe();
    await eventually(() => finished, 1000, 'finally');
  });

  it('errors clearly on a second subscription to a generator object', async () => {
    async function* gen() {
      yield new Uint8Array(1);
    }
    const source = fromAsyncIterable(gen());
    await collect(source);
    await expect(collect(source)).rejects.toBeInstanceOf(AudioSourceError);
  });

  it('wraps a thrown error', async () => {
    async function* gen(): AsyncGenerator<Uint8Array> {
      yield new Uint8Array(1);
      throw new Error('mic unplugged');
    }
    await expect(collect(fromAsyncIterable(gen()))).rejects.toMatchObject({ code: 'source_error', message: expect.stringMatching(/mic unplugged/) });
  });

  it('an iterator whose next() resolves at once lets the event loop turn at least every 256 KiB', async () => {
    const chunk = new Uint8Array(16 * 1024);
    let yielded = 0;
    // A memory source: no await on I/O between chunks, 8 MiB in all.
    async function* memory(): AsyncGenerator<Uint8Array> {
      for (let i = 0; i < 512; i++) {
        yielded += chunk.byteLength;
        yield chunk;
      }
    }
    const { seen } = await readWatchingTurns(() => yielded, () => collect(fromAsyncIterable(memory())));
    const total = 512 * chunk.byteLength;
    expect(seen.filter((n) => n > 0 && n < total).length).toBeGreaterThanOrEqual(16);
    for (let i = 1; i < seen.length; i++) expect(seen[i]! - seen[i - 1]!, `turn ${i}`).toBeLessThanOrEqual(256 * 1024 + chunk.byteLength);
  });
});
