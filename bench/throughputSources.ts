// The sources the throughput benches drive, over the same frames: fromAsyncIterable over a
// generator, fromReadable over a Readable that pushes `size`-byte buffers, fileSource over a
// WAV file on disk read `size` bytes at a time, the bench's pull source, and a plain push
// Observable paced by a FlowControl handed to the session as `flow`. Plus the bare clients.
import { createReadStream, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { Observable } from 'rxjs';
import WebSocket from 'ws';
import { fileSource } from '../src/audio/fileSource.js';
import { fromAsyncIterable } from '../src/audio/fromAsyncIterable.js';
import { fromReadable } from '../src/audio/fromReadable.js';
import { FlowControl } from '../src/audio/FlowControl.js';
import { pullFrames, RAW, wavHeader, wsUrl } from './benchInternals.js';

export type SourceKind = 'pull' | 'iterable' | 'readable' | 'file' | 'fileBlocks' | 'push';
/**
 * The public sources, and the paced push Observable of docs/audio-sources.md. `file` reads
 * the file one frame per disk read (`chunkSize` = frame); `fileBlocks` with the default 64 KiB.
 */
export const SOURCE_KINDS = ['iterable', 'readable', 'fileBlocks', 'file', 'push'] as const satisfies readonly SourceKind[];

export interface BenchSource {
  readonly audio$: Observable<Uint8Array>;
  /** Set for the push source: the FlowControl to hand the session as `flow`. */
  readonly flow?: FlowControl | undefined;
}

/** A WAV file of `count` frames of `size` bytes (header included), for fileSource and the bare file client. */
export function benchFile(count: number, size: number): { file: string; remove(): void } {
  const dir = mkdtempSync(path.join(tmpdir(), 'svc-bench-'));
  const file = path.join(dir, 'audio.wav');
  writeFileSync(file, wavFile(count * size - 44));
  return { file, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

/** `count` chunks of `size` bytes from the named source (`file` is a {@link benchFile} of the same shape). */
export function makeSource(kind: SourceKind, count: number, size: number, file?: string): BenchSource {
  if (kind === 'pull') return { audio$: pullFrames(count, size) };
  if (kind === 'iterable') {
    const frame = new Uint8Array(size);
    async function* frames(): AsyncGenerator<Uint8Array> {
      for (let i = 0; i < count; i++) yield frame;
    }
    return { audio$: fromAsyncIterable({ [Symbol.asyncIterator]: frames }, { format: RAW }) };
  }
  if (kind === 'readable') {
    const frame = Buffer.alloc(size);
    let i = 0;
    const stream = new Readable({
      highWaterMark: 64 * 1024,
      read() {
        // Push until the stream's buffer is full, as a socket or a pipe would.
        while (i < count) {
          i++;
          if (!this.push(frame)) return;
        }
        this.push(null);
      },
    });
    return { audio$: fromReadable(stream, { format: RAW }) };
  }
  if (kind === 'push') {
    const flow = new FlowControl();
    const frame = new Uint8Array(size);
    const audio$ = new Observable<Uint8Array>((subscriber) => {
      let stopped = false;
      void (async () => {
        for (let i = 0; i < count && !stopped; i++) {
          if (flow.paused) await flow.ready();
          if (!stopped) subscriber.next(frame);
        }
        if (!stopped) subscriber.complete();
      })();
      return () => {
        stopped = true;
      };
    });
    return { audio$, flow };
  }
  if (file === undefined) throw new Error('the file source needs benchFile()');
  return { audio$: fileSource(file, kind === 'file' ? { probe: false, chunkSize: size } : { probe: false }) };
}

/**
 * What the library does with a file, written directly on `ws`: read it `size` bytes at a time
 * with a ReadStream, send each read as a frame, pause the stream above the same 1 MiB
 * high-water mark and resume at half, then the empty frame; wait for the close after `done`.
 */
export function bareFileClient(baseUrl: string, file: string, size: number, highWater = 1 << 20): Promise<void> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(wsUrl(baseUrl), { perMessageDeflate: false });
    let inFlight = 0;
    ws.on('open', () => {
      ws.send('default');
      const stream = createReadStream(file, { highWaterMark: size });
      stream.on('data', (chunk) => {
        const len = chunk.length;
        inFlight += len;
        ws.send(chunk, { binary: true }, () => {
          inFlight -= len;
          if (stream.isPaused() && inFlight <= highWater / 2) stream.resume();
        });
        if (inFlight > highWater) stream.pause();
      });
      stream.on('end', () => ws.send(''));
      stream.on('error', reject);
    });
    ws.on('message', () => undefined);
    ws.on('error', reject);
    ws.on('close', (code) => (code === 1000 ? resolve() : reject(new Error(`closed ${code}`))));
  });
}

/** A mono s16le 16 kHz WAV file of `dataBytes` bytes of silence after its 44-byte header. */
function wavFile(dataBytes: number): Buffer {
  return Buffer.concat([wavHeader(dataBytes), Buffer.alloc(dataBytes)]);
}
