// An audio observable over an async iterable (an async generator, a Web ReadableStream, any
// pull source), read lazily so a paused session pauses the producer.
import { Observable } from 'rxjs';
import { AudioSourceError } from '../errors/index.js';
import type { AudioFormat } from '../schema/audio.js';
import type { FlowControl } from './FlowControl.js';
import { pullIterator, sourceError, takeFlow } from './sourceFlow.js';
import { withAudioMeta, type AudioChunk, type AudioObservable, type FlowSlot } from './meta.js';

/** Options of {@link fromAsyncIterable}: the audio format of the bytes and an optional shared flow-control gate. */
export interface FromAsyncIterableOptions {
  /** What the bytes are, so the session need not be told again. */
  readonly format?: AudioFormat | undefined;
  /**
   * A gate to honour as well as the session's (for example when an operator between this
   * source and the session drops the metadata, and you share one FlowControl).
   */
  readonly flow?: FlowControl | undefined;
}

/**
 * Emit the chunks of an async iterable of `Uint8Array`s, pulling one at a time.
 *
 * - Cold and lazy: nothing is pulled before subscription, and the next chunk is pulled only
 *   after the previous one was emitted and the flow control (if any) is not paused.
 * - Completes when the iterator is done; errors with `AudioSourceError('source_error')` when
 *   it throws or yields something that is not a `Uint8Array`.
 * - Unsubscribing calls the iterator's `return()`, so a generator runs its `finally`.
 * - Each subscription asks the iterable for a fresh iterator. An iterable that is its own
 *   iterator (a generator object) can be consumed once: a second subscription errors with
 *   `AudioSourceError('source_error')` instead of silently completing empty.
 *
 * ## Example
 * ```ts
 * import { fromAsyncIterable } from 'svc-stream';
 *
 * async function* tone() {
 *   for (let i = 0; i < 10; i++) yield new Uint8Array(3200); // 100 ms of s16le 16 kHz mono
 * }
 * fromAsyncIterable(tone(), { format: { audio_format: 's16le', sample_rate: 16000, num_channels: 1 } })
 *   .subscribe((chunk) => console.log(chunk.byteLength));
 * ```
 */
export function fromAsyncIterable(iterable: AsyncIterable<Uint8Array>, options: FromAsyncIterableOptions = {}): AudioObservable {
  const slot: FlowSlot = { current: undefined };
  let consumed = false;
  const source = new Observable<AudioChunk>((subscriber) => {
    const flow = takeFlow(slot, options.flow, subscriber);
    let iterator: AsyncIterator<unknown>;
    try {
      iterator = iterable[Symbol.asyncIterator]();
    } catch (err) {
      subscriber.error(sourceError(err, 'async iterable'));
      return;
    }
    if ((iterator as unknown) === iterable) {
      if (consumed) {
        subscriber.error(new AudioSourceError('source_error', 'this async iterable is its own iterator (a generator object?) and was already consumed by an earlier subscription; create a new source for each subscription'));
        return;
      }
      consumed = true;
    }
    return pullIterator(iterator, subscriber, flow, 'async iterable', () => {
      iterator.return?.().catch(() => undefined);
    });
  });
  return withAudioMeta(source, { ...(options.format ? { format: options.format } : {}), flow: slot });
}
