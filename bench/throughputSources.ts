// The three public sources the throughput benches drive, over the same frames: fromAsyncIterable
// over a generator, fromReadable over an object-free Readable that hands out `size`-byte buffers,
// and fileSource over a raw file on disk read `size` bytes at a time. Plus the bench pull source.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { fileSource } from '../src/audio/fileSource.js';
import { fromAsyncIterable } from '../src/audio/fromAsyncIterable.js';
import { fromReadable } from '../src/audio/fromReadable.js';
import type { AudioObservable } from '../src/audio/meta.js';
import { pullFrames, RAW } from './benchInternals.js';

export type SourceKind = 'pull' | 'iterable' | 'readable' | 'file';
export const SOURCE_KINDS: readonly SourceKind[] = ['iterable', 'readable', 'file'];

export interface BenchSource {
  readonly audio$: AudioObservable;
  cleanup(): Promise<void>;
}

/** `count` chunks of `size` bytes from the named source. The file is written before timing starts. */
export async function makeSource(kind: SourceKind, count: number, size: number): Promise<BenchSource> {
  const none = async (): Promise<void> => undefined;
  if (kind === 'pull') return { audio$: pullFrames(count, size), cleanup: none };
  if (kind === 'iterable') {
    const frame = new Uint8Array(size);
    async function* frames(): AsyncGenerator<Uint8Array> {
      for (let i = 0; i < count; i++) yield frame;
    }
    return { audio$: fromAsyncIterable({ [Symbol.asyncIterator]: frames }, { format: RAW }), cleanup: none };
  }
  if (kind === 'readable') {
    const frame = Buffer.alloc(size);
    let i = 0;
    const stream = new Readable({
      highWaterMark: 64 * 1024,
      read() {
        // Push until the stream's buffer is full, as a socket or a file would.
        while (i < count) {
          i++;
          if (!this.push(frame)) return;
        }
        this.push(null);
      },
    });
    return { audio$: fromReadable(stream, { format: RAW }), cleanup: none };
  }
  const dir = mkdtempSync(path.join(tmpdir(), 'svc-bench-'));
  // A .wav passes through untouched: a 44-byte header, then the frames.
  const file = path.join(dir, 'audio.wav');
  writeFileSync(file, wavFile(count * size - 44));
  return {
    audio$: fileSource(file, { probe: false, chunkSize: size }),
    cleanup: async () => rmSync(dir, { recursive: true, force: true }),
  };
}

/** A mono s16le 16 kHz WAV file of `dataBytes` bytes of silence after its 44-byte header. */
function wavFile(dataBytes: number): Buffer {
  const buf = Buffer.alloc(44 + dataBytes);
  buf.write('RIFF', 0, 'ascii');
  buf.writeUInt32LE(36 + dataBytes, 4);
  buf.write('WAVEfmt ', 8, 'ascii');
  buf.writeUInt32LE(16, 16);
  buf.writeUInt16LE(1, 20);
  buf.writeUInt16LE(1, 22);
  buf.writeUInt32LE(16_000, 24);
  buf.writeUInt32LE(32_000, 28);
  buf.writeUInt16LE(2, 32);
  buf.writeUInt16LE(16, 34);
  buf.write('data', 36, 'ascii');
  buf.writeUInt32LE(dataBytes, 40);
  return buf;
}
