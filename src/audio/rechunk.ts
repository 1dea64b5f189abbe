// Re-chunking raw audio into chunks of a fixed duration, on sample-frame boundaries.
import type { OperatorFunction } from 'rxjs';
import { InputError } from '../errors/index.js';
import { isRawFormat, msToBytes, type RawAudioFormat } from '../schema/audio.js';
import { AudioSource, audioMetaOf, type AudioChunk } from './meta.js';
import { operatorSubscriber } from '../internal/operate.js';

/** Options of {@link rechunk}: the chunk duration and, when upstream does not carry it, the raw format. */
export interface RechunkOptions {
  /** Duration of each chunk in milliseconds (default 100; 20 for low latency). */
  readonly ms?: number | undefined;
  /** The raw format of the input; read from upstream's metadata when not given. */
  readonly format?: RawAudioFormat | undefined;
}

/**
 * Re-chunk a raw audio stream into chunks of exactly `ms` milliseconds (see
 * {@link msToBytes} for the rounding), whatever the sizes of the incoming chunks.
 *
 * - Every emitted chunk but the last is exactly `msToBytes(format, ms)` bytes, so chunks
 *   start on sample-frame boundaries for every raw format of §4.3.
 * - On completion the last partial chunk is flushed, never dropped; errors pass through
 *   (the partial chunk is dropped with the stream).
 * - O(total bytes): each byte is copied at most once; whole chunks inside an incoming one
 *   are emitted as views of it, without copying.
 * - Cold, like its upstream. Keeps the upstream's format and flow control (pausing the
 *   result pauses the source).
 * - Errors with `InputError('invalid_argument')` on subscribe when no raw format is known.
 *
 * ## Example
 * ```ts
 * import { fileSource, rechunk } from 'svc-stream';
 *
 * fileSource('call.mp4') // transcoded to s16le 16 kHz mono
 *   .pipe(rechunk({ ms: 20 }))
 *   .subscribe((chunk) => console.log(chunk.byteLength)); // 640, 640, …, then the rest
 * ```
 */
export function rechunk(options: RechunkOptions = {}): OperatorFunction<Uint8Array, Uint8Array> {
  const ms = options.ms ?? 100;
  if (options.format) msToBytes(options.format, ms);
  else if (typeof ms !== 'number' || !Number.isFinite(ms) || ms <= 0) throw new InputError('invalid_argument', `ms must be a positive number, got ${String(ms)}`, { path: 'ms' });
  return (upstream) => {
    const upstreamMeta = audioMetaOf(upstream);
    const upstreamFormat = upstreamMeta?.format;
    const format = options.format ?? (isRawFormat(upstreamFormat) ? upstreamFormat : undefined);
    // The upstream's flow slot, as is: rechunk subscribes upstream synchronously, so a
    // session's gate reaches the source itself.
    const flow = upstreamMeta?.flow;
    return new AudioSource<AudioChunk>({ ...(format ? { format } : {}), ...(flow ? { flow } : {}) }, (subscriber) => {
      if (!format) {
        subscriber.error(new InputError('invalid_argument', 'rechunk() needs a raw audio format: pass { format } or use a source that carries one', { path: 'format' }));
        return;
      }
      const size = msToBytes(format, ms);
      let pending: Uint8Array | undefined;
      let filled = 0;
      return upstream.subscribe(operatorSubscriber<AudioChunk>(subscriber, {
        next: (chunk) => {
          let offset = 0;
          if (pending) {
            const n = Math.min(size - filled, chunk.byteLength);
            pending.set(chunk.subarray(0, n), filled);
            filled += n;
            offset = n;
            if (filled < size) return;
            const full = pending;
            pending = undefined;
            filled = 0;
            subscriber.next(full);
          }
          while (chunk.byteLength - offset >= size) {
            subscriber.next(chunk.subarray(offset, offset + size));
            offset += size;
          }
          if (offset < chunk.byteLength) {
            pending = new Uint8Array(size);
            pending.set(chunk.subarray(offset), 0);
            filled = chunk.byteLength - offset;
          }
        },
        complete: () => {
          if (pending && filled > 0) subscriber.next(pending.subarray(0, filled));
          pending = undefined;
          subscriber.complete();
        },
      }));
    });
  };
}
