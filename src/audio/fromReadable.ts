// An audio observable over a Node Readable, read lazily so a paused session pauses the stream
// (and, through the stream's own backpressure, whatever feeds it).
import { finished, type Readable } from 'node:stream';
import { Observable } from 'rxjs';
import { AudioSourceError } from '../errors/index.js';
import type { AudioFormat } from '../schema/audio.js';
import type { FlowControl } from './FlowControl.js';
import { asChunk, sourceError, takeFlow, YIELD_BYTES } from './sourceFlow.js';
import { withAudioMeta, type AudioChunk, type AudioObservable, type FlowSlot } from './meta.js';

/** Options of {@link fromReadable}: the audio format of the bytes and an optional shared flow-control gate. */
export interface FromReadableOptions {
  /** What the bytes are, so the session need not be told again. */
  readonly format?: AudioFormat | undefined;
  /** A gate to honour as well as the session's (for an operator in between that drops the metadata; the same one goes to the session as `flow`). */
  readonly flow?: FlowControl | undefined;
}

/**
 * Emit the chunks of a Node `Readable` (in binary mode), reading with `read()` in a loop
 * whenever the stream has data (each `read()` returns all it holds, as one chunk).
 *
 * - Lazy: the stream is not read before subscription; nothing is read while the flow
 *   control (if any) is paused, so a fast file into a slow session holds at most the
 *   stream's `highWaterMark` in memory.
 * - Never holds the event loop: a stream that refills at once (`Readable.from` over audio
 *   already in memory runs on microtasks alone) is read a few hundred KiB at a time, with a
 *   turn of the event loop (timers, sockets) in between.
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
    const flow = takeFlow(slot, options.flow, subscriber);
    if (consumed || stream.readableEnded || stream.destroyed) {
      subscriber.error(new AudioSourceError('source_error', 'this Readable was already consumed (a Node stream can be read once); create a new source for each subscription'));
      return;
    }
    consumed = true;
    let closed = false;
    let waiting = false;
    /** Bytes read since the event loop last turned; `turning` while a turn is awaited. */
    let sinceTurn = 0;
    let turning: NodeJS.Immediate | undefined;
    const stop = (): void => {
      if (closed) return;
      closed = true;
      stream.off('readable', pump);
      if (turning) clearImmediate(turning);
      cleanup();
      if (!stream.destroyed) stream.destroy();
    };
    // Everything the stream holds, chunk after chunk in one synchronous loop: no await per chunk;
    // but a stream that refills on microtasks ('readable' comes on process.nextTick) would keep
    // the loop here for good, so after YIELD_BYTES the reading waits for the loop to turn.
    function pump(): void {
      if (turning) return;
      try {
        while (!closed) {
          if (flow?.paused) {
            if (!waiting) {
              waiting = true;
              void flow.ready().then(() => {
                waiting = false;
                pump();
              });
            }
            return;
          }
          const value: unknown = stream.read();
          if (value === null) return; // 'readable' or the end comes next
          const chunk = asChunk(value);
          subscriber.next(chunk);
          sinceTurn += chunk.byteLength;
          if (sinceTurn >= YIELD_BYTES && !closed) {
            turning = setImmediate(() => {
              turning = undefined;
              sinceTurn = 0;
              pump();
            });
            return;
          }
        }
      } catch (err) {
        if (closed) return;
        subscriber.error(sourceError(err, 'readable stream'));
        stop();
      }
    }
    // `finished` sees the end, an error, and a close before the end (a premature close).
    const cleanup = finished(stream, { writable: false }, (err) => {
      if (closed) return;
      closed = true;
      stream.off('readable', pump);
      cleanup();
      if (err) {
        subscriber.error(sourceError(err, 'readable stream'));
        if (!stream.destroyed) stream.destroy();
      } else subscriber.complete();
    });
    stream.on('readable', pump);
    return stop;
  });
  return withAudioMeta(source, { ...(options.format ? { format: options.format } : {}), flow: slot });
}
