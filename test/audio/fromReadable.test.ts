import { createReadStream } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough, Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AudioSourceError } from '../../src/errors/index.js';
import { FlowControl } from '../../src/audio/FlowControl.js';
import { audioMetaOf, fromReadable } from 'svc-stream';
import { byteCount, collect, eventually, readPausingAfter, readWatchingTurns } from './fixtures.js';

let dir: string;
let big: string;
const BIG = 4 * 1024 * 1024;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'svc-readable-'));
  big = join(dir, 'big.raw');
  await writeFile(big, Buffer.alloc(BIG, 7));
});
afterAll(() => rm(dir, { recursive: true, force: true }));

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('fromReadable', () => {
  it('emits every byte read, and carries the format', async () => {
    const format = { audio_format: 's16le', sample_rate: 16000, num_channels: 1 } as const;
    const source = fromReadable(createReadStream(big), { format });
    expect(audioMetaOf(source)?.format).toEqual(format);
    expect(audioMetaOf(source)?.flow).toEqual({ current: undefined });
    expect(byteCount(await collect(source))).toBe(BIG);
  });

  it('pauses a fast file for a slow consumer: bytes read stay bounded while the flow is paused', async () => {
    const stream = createReadStream(big, { highWaterMark: 64 * 1024 });
    const source = fromReadable(stream);
    const read = await readPausingAfter(source, 256 * 1024); // as the session does, just before subscribing
    await eventually(() => read.flow.paused, 5000, 'pause');
    await sleep(150);
    const readWhilePaused = stream.bytesRead;
    expect(read.emitted()).toBe(256 * 1024);
    // At most the stream's buffer (one highWaterMark) and one chunk beyond what was emitted.
    expect(readWhilePaused - read.emitted()).toBeLessThanOrEqual(2 * 64 * 1024);
    await sleep(100);
    expect(stream.bytesRead).toBe(readWhilePaused);
    expect(audioMetaOf(source)!.flow!.current).toBeUndefined(); // the slot was taken
    read.flow.resume();
    await eventually(() => read.done(), 5000, 'completion');
    expect(read.emitted()).toBe(BIG);
    read.unsubscribe();
  });

  it('honours an explicit flow option', async () => {
    const flow = new FlowControl();
    flow.pause();
    const stream = Readable.from([Buffer.alloc(10), Buffer.alloc(10)]);
    let got = 0;
    const sub = fromReadable(stream, { flow }).subscribe(() => got++);
    await sleep(30);
    expect(got).toBe(0);
    flow.resume();
    await eventually(() => got === 2, 2000, 'two chunks');
    sub.unsubscribe();
  });

  it('is single-use: a second subscription errors clearly', async () => {
    const source = fromReadable(Readable.from([Buffer.from('ab')]));
    await collect(source);
    const err = await collect(source).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AudioSourceError);
    expect((err as AudioSourceError).code).toBe('source_error');
    expect((err as Error).message).toMatch(/already consumed/);
  });

  it('destroys the stream on unsubscribe', async () => {
    const stream = new PassThrough();
    const sub = fromReadable(stream).subscribe();
    stream.write(Buffer.alloc(4));
    await sleep(10);
    sub.unsubscribe();
    await eventually(() => stream.destroyed, 1000, 'destroy');
  });

  it('turns a stream error and string chunks into typed errors', async () => {
    const failing = new Readable({ read() { this.destroy(new Error('disk on fire')); } });
    await expect(collect(fromReadable(failing))).rejects.toMatchObject({ code: 'source_error', message: expect.stringMatching(/disk on fire/) });
    const text = Readable.from(['not audio']);
    await expect(collect(fromReadable(text))).rejects.toMatchObject({ code: 'source_error', message: expect.stringMatching(/string/) });
  });

  it('a stream that refills on microtasks (Readable.from over memory) lets the event loop turn at least every 256 KiB', async () => {
    const chunk = Buffer.alloc(16 * 1024);
    let yielded = 0;
    async function* memory(): AsyncGenerator<Buffer> {
      for (let i = 0; i < 512; i++) {
        yielded += chunk.byteLength;
        yield chunk;
      }
    }
    const { result, seen } = await readWatchingTurns(() => yielded, () => collect(fromReadable(Readable.from(memory(), { objectMode: false }))));
    const total = 512 * chunk.byteLength;
    expect(byteCount(result)).toBe(total);
    expect(seen.filter((n) => n > 0 && n < total).length).toBeGreaterThanOrEqual(16);
    // What the stream buffers ahead (its high-water mark) comes on top of the 256 KiB read between turns.
    for (let i = 1; i < seen.length; i++) expect(seen[i]! - seen[i - 1]!, `turn ${i}`).toBeLessThanOrEqual(256 * 1024 + 128 * 1024);
  });
});
