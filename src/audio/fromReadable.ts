// An audio observable over a Node Readable, read lazily so a paused session pauses the stream
// (and, through the stream's own backpressure, whatever feeds it).
import type { Readable } from 'node:stream';
import { Observable } from 'rxjs';
import { AudioSourceError } from '../errors.js';
import type { AudioFormat } from '../schema/audio.js';
import type { FlowControl } from '../internal/flow.js';
import { pullIterator, takeFlow } from './audioInternals.js';
import { withAudioMeta, type AudioChunk, type AudioObservable, type FlowSlot } from './meta.js';

/** Options of {@link fromReadable}: the audio format of the bytes and an optional shared flow-control gate. */
export interface FromReadableOptions {
  /** What the bytes are, so the session need not be told again. */
  readonly format?: AudioFormat | undefined;
  /** A gate to honour when no session left one in the flow slot. */
  readonly flow?: FlowControl | undefined;
}

/**
 * Emit the chunks of a Node `Readable` (in binary mode), reading one chunk at a time.
 *
 * - Lazy: the stream is not read before subscription; the next chunk is read only when the
 *   flow control (if any) is not paused, so a fast file into a slow session holds at most
 *   the stream's `highWaterMark` in memory.
 * - Completes when the stream ends; errors with `AudioSourceError('source_error')` when the
 *   stream errors or yields strings (do not call `setEncoding` on an audio stream).
 * - Unsubscribing destroys the stream.
 * - Single-use: a Readable can be consumed once, so the observable is cold in the sense
 *   that nothing happens before subscription, but a second subscription (or one to a stream
 *   that already ended or was destroyed) errors with `AudioSourceError('source_error')`.
 *   Use `fileSource()` for something you can subscribe to again.
 *
 * ## Example
 * ```ts
 * import { spawn } from 'node:child_process';
 * import { fromReadable } from 'svc-stream';
 *
 * const arecord = spawn('arecord', ['-q', '-f', 'S16_LE', '-r', '16000', '-c', '1', '-t', 'raw']);
 * const mic$ = fromReadable(arecord.stdout, { format: { audio_format: 's16le', sample_rate: 16000, num_channels: 1 } });
 * mic$.subscribe((chunk) => console.log(chunk.byteLength));
 * ```
 */
export function fromReadable(stream: Readable, options: FromReadableOptions = {}): AudioObservable {
  const slot: FlowSlot = { current: undefined };
  let consumed = false;
  const source = new Observable<AudioChunk>((subscriber) => {
    const flow = takeFlow(slot, options.flow);
    if (consumed || stream.readableEnded || stream.destroyed) {
      subscriber.error(new AudioSourceError('source_error', 'this Readable was already consumed (a Node stream can be read once); create a new source for each subscription'));
      return;
    }
    consumed = true;
    const iterator = stream[Symbol.asyncIterator]();
    // Destroy directly rather than through iterator.return(): a return() queued behind a
    // pending next() would wait for data that may never come.
    return pullIterator(iterator, subscriber, flow, 'readable stream', () => {
      if (!stream.destroyed) stream.destroy();
    });
  });
  return withAudioMeta(source, { ...(options.format ? { format: options.format } : {}), flow: slot });
}
