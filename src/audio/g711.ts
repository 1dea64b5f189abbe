// G.711 for telephony: mu-law and A-law encode/decode over Int16 samples and s16le bytes
// (via the alawmulaw package), and operators converting audio streams both ways.
import * as alawmulawModule from 'alawmulaw';
import type { OperatorFunction, Subscriber, TeardownLogic } from 'rxjs';
import { InputError } from '../errors/index.js';
import type { AudioFormat, RawAudioFormat } from '../schema/audio.js';
import { AudioSource, audioMetaOf, type AudioChunk, type AudioSourceMeta } from './meta.js';
import { operatorSubscriber } from '../internal/operate.js';

/** The two G.711 companding laws, named like the service's raw formats. */
export type G711Law = 'mulaw' | 'alaw';

// alawmulaw is ESM under its `module` field (named `alaw` and `mulaw`: what a bundler for the
// browser resolves) and a UMD bundle under `main` (what Node loads: one default export).
const alawmulaw = ('mulaw' in alawmulawModule ? alawmulawModule : Reflect.get(alawmulawModule, 'default')) as typeof alawmulawModule;

/** Whether this host stores an Int16 low byte first; asked of a typed array, so no Node call. */
let littleEndianHost: boolean | undefined;
function isLittleEndianHost(): boolean {
  return (littleEndianHost ??= new Uint8Array(new Uint16Array([1]).buffer)[0] === 1);
}

/** Encode 16-bit samples to 8-bit mu-law. */
export function mulawEncode(samples: Int16Array): Uint8Array {
  return alawmulaw.mulaw.encode(samples);
}
/** Decode 8-bit mu-law to 16-bit samples. */
export function mulawDecode(bytes: Uint8Array): Int16Array {
  return alawmulaw.mulaw.decode(bytes);
}
/** Encode 16-bit samples to 8-bit A-law. */
export function alawEncode(samples: Int16Array): Uint8Array {
  return alawmulaw.alaw.encode(samples);
}
/** Decode 8-bit A-law to 16-bit samples. */
export function alawDecode(bytes: Uint8Array): Int16Array {
  return alawmulaw.alaw.decode(bytes);
}

/** Samples of s16le bytes (an even number of them); a view when aligned on a little-endian host. */
export function s16leSamples(bytes: Uint8Array): Int16Array {
  if (bytes.byteLength % 2 !== 0) throw new InputError('invalid_argument', `s16le data must have an even number of bytes, got ${bytes.byteLength}`);
  if (isLittleEndianHost()) {
    const aligned = bytes.byteOffset % 2 === 0 ? bytes : bytes.slice();
    return new Int16Array(aligned.buffer, aligned.byteOffset, aligned.byteLength / 2);
  }
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const out = new Int16Array(bytes.byteLength / 2);
  for (let i = 0; i < out.length; i++) out[i] = view.getInt16(i * 2, true);
  return out;
}

/** s16le bytes of samples; a view on a little-endian host. */
export function s16leBytes(samples: Int16Array): Uint8Array {
  if (isLittleEndianHost()) return new Uint8Array(samples.buffer, samples.byteOffset, samples.byteLength);
  const out = new Uint8Array(samples.length * 2);
  const view = new DataView(out.buffer);
  for (let i = 0; i < samples.length; i++) view.setInt16(i * 2, samples[i]!, true);
  return out;
}

/** Encode s16le bytes to G.711 (one byte per sample). */
export function encodeG711(law: G711Law, s16le: Uint8Array): Uint8Array {
  const samples = s16leSamples(s16le);
  return law === 'mulaw' ? mulawEncode(samples) : alawEncode(samples);
}

/** Decode G.711 bytes to s16le (two bytes per sample). */
export function decodeG711(law: G711Law, bytes: Uint8Array): Uint8Array {
  return s16leBytes(law === 'mulaw' ? mulawDecode(bytes) : alawDecode(bytes));
}

function checkInput(format: AudioFormat | undefined, expected: string, op: string): InputError | undefined {
  if (format?.audio_format === undefined || format.audio_format === expected) return undefined;
  return new InputError('invalid_argument', `${op} expects ${expected} input, but the source says ${format.audio_format}`, { path: 'format' });
}

function withFormat(format: AudioFormat | undefined, audio_format: RawAudioFormat['audio_format']): RawAudioFormat | undefined {
  if (format === undefined || !('sample_rate' in format)) return undefined;
  return { audio_format, sample_rate: format.sample_rate, num_channels: format.num_channels };
}

/**
 * The converted stream: the new format, and the upstream's flow slot as is (the conversion
 * subscribes upstream synchronously, so a session's gate reaches the source itself).
 */
function converted(upstream: AudioSourceMeta | undefined, format: RawAudioFormat | undefined, subscribe: (subscriber: Subscriber<AudioChunk>) => TeardownLogic): AudioSource<AudioChunk> {
  const flow = upstream?.flow;
  return new AudioSource<AudioChunk>({ ...(format ? { format } : {}), ...(flow ? { flow } : {}) }, subscribe);
}

/**
 * Convert an s16le stream to G.711 (`mulaw` or `alaw`), for telephony.
 *
 * - One output byte per input sample; a sample split across two chunks is carried over, so
 *   chunk sizes need not be even. A dangling odd byte at completion is dropped (it is half a
 *   sample) and counted in nothing.
 * - Cold, like its upstream; keeps its flow control. The result's format is the upstream's
 *   with `audio_format` set to the law.
 * - Errors with `InputError('invalid_argument')` on subscribe when upstream says it is not s16le.
 *
 * ## Example
 * ```ts
 * import { fileSource, toG711 } from 'svc-stream';
 *
 * fileSource('call.mp4', { transcode: { sampleRate: 8000, channels: 1 } })
 *   .pipe(toG711('mulaw'))
 *   .subscribe((chunk) => console.log(chunk.byteLength));
 * ```
 */
export function toG711(law: G711Law): OperatorFunction<Uint8Array, Uint8Array> {
  return (upstream) => {
    const meta = audioMetaOf(upstream);
    const format = meta?.format;
    const out = (subscriber: Subscriber<AudioChunk>): TeardownLogic => {
      const bad = checkInput(format, 's16le', `toG711('${law}')`);
      if (bad) {
        subscriber.error(bad);
        return;
      }
      let carry: number | undefined;
      return upstream.subscribe(operatorSubscriber<AudioChunk>(subscriber, {
        next: (chunk) => {
          let bytes = chunk;
          if (carry !== undefined && bytes.byteLength > 0) {
            const joined = new Uint8Array(bytes.byteLength + 1);
            joined[0] = carry;
            joined.set(bytes, 1);
            bytes = joined;
            carry = undefined;
          }
          if (bytes.byteLength % 2 === 1) {
            carry = bytes[bytes.byteLength - 1];
            bytes = bytes.subarray(0, bytes.byteLength - 1);
          }
          if (bytes.byteLength > 0) subscriber.next(encodeG711(law, bytes));
        },
      }));
    };
    return converted(meta, withFormat(format, law), out);
  };
}

/**
 * Convert a G.711 stream (`mulaw` or `alaw`) to s16le.
 *
 * - Two output bytes per input byte, chunk for chunk.
 * - Cold, like its upstream; keeps its flow control. The result's format is the upstream's
 *   with `audio_format: 's16le'`.
 * - Errors with `InputError('invalid_argument')` on subscribe when upstream says it is another format.
 *
 * ## Example
 * ```ts
 * import { fromG711, fromReadable } from 'svc-stream';
 * import { Readable } from 'node:stream';
 *
 * const ulaw = Readable.from([new Uint8Array(160).fill(0xff)]); // 20 ms of silence at 8 kHz
 * fromReadable(ulaw, { format: { audio_format: 'mulaw', sample_rate: 8000, num_channels: 1 } })
 *   .pipe(fromG711('mulaw'))
 *   .subscribe((chunk) => console.log(chunk.byteLength)); // 320
 * ```
 */
export function fromG711(law: G711Law): OperatorFunction<Uint8Array, Uint8Array> {
  return (upstream) => {
    const meta = audioMetaOf(upstream);
    const format = meta?.format;
    const out = (subscriber: Subscriber<AudioChunk>): TeardownLogic => {
      const bad = checkInput(format, law, `fromG711('${law}')`);
      if (bad) {
        subscriber.error(bad);
        return;
      }
      return upstream.subscribe(operatorSubscriber<AudioChunk>(subscriber, {
        next: (chunk) => {
          if (chunk.byteLength > 0) subscriber.next(decodeG711(law, chunk));
        },
      }));
    };
    return converted(meta, withFormat(format, 's16le'), out);
  };
}
