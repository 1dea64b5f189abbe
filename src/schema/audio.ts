// Audio formats the streaming endpoint accepts (§4.3 and the wire reference), as data:
// every raw format has a descriptor so sample and byte sizes are computed, never guessed.
import { z } from 'zod';
import { InputError } from '../errors/index.js';

/** The 20 raw (headerless) formats of §4.3. They need `sample_rate` and `num_channels`. */
export const RAW_FORMATS = [
  's8', 's16le', 's16be', 's24le', 's24be', 's32le', 's32be',
  'u8', 'u16le', 'u16be', 'u24le', 'u24be', 'u32le', 'u32be',
  'f32le', 'f32be', 'f64le', 'f64be', 'mulaw', 'alaw',
] as const;
/** Validates an `audio_format` that names a raw format: one of {@link RAW_FORMATS} (§4.3). Infers {@link RawFormat}. */
export const RawFormatSchema = z.enum(RAW_FORMATS);
/** A raw (headerless) `audio_format` such as `s16le` or `mulaw`; needs `sample_rate` and `num_channels` (§4.3). */
export type RawFormat = z.infer<typeof RawFormatSchema>;

/** Self-describing formats the streaming endpoint detects from headers (wire reference names). */
export const CONTAINER_FORMATS = ['wav', 'mp3', 'ogg', 'flac', 'webm', 'aac', 'aiff'] as const;
/** Validates an `audio_format` that names a self-describing container: one of {@link CONTAINER_FORMATS}. Infers {@link ContainerFormat}. */
export const ContainerFormatSchema = z.enum(CONTAINER_FORMATS);
/** A self-describing `audio_format` such as `wav` or `ogg` (Opus in OGG is `ogg`, not `opus`, §4.3). */
export type ContainerFormat = z.infer<typeof ContainerFormatSchema>;

/** The `sample_rate` values in Hz the streaming socket accepts (§4.3). */
export const SAMPLE_RATES = [8000, 11025, 16000, 22050, 32000, 44100, 48000, 96000] as const;
/** One of the sample rates the streaming socket accepts, in Hz: 8000, 11025, 16000, 22050, 32000, 44100, 48000 or 96000 (§4.3). */
export type SampleRate = (typeof SAMPLE_RATES)[number];
/** Validates a `sample_rate` query value: a number in {@link SAMPLE_RATES} (§4.3); narrows to {@link SampleRate}. */
export const SampleRateSchema = z
  .number()
  .refine((v): v is SampleRate => (SAMPLE_RATES as readonly number[]).includes(v), {
    message: `sample_rate must be one of ${SAMPLE_RATES.join(', ')}`,
  });

/** Smallest `num_channels` the streaming socket accepts (1). */
export const MIN_CHANNELS = 1;
/** Largest `num_channels` the streaming socket accepts (8, wire reference). */
export const MAX_CHANNELS = 8;
/** Validates a `num_channels` query value: an integer from {@link MIN_CHANNELS} to {@link MAX_CHANNELS}. Infers `number`. */
export const NumChannelsSchema = z
  .number()
  .int({ message: 'num_channels must be an integer' })
  .min(MIN_CHANNELS, { message: `num_channels must be between ${MIN_CHANNELS} and ${MAX_CHANNELS}` })
  .max(MAX_CHANNELS, { message: `num_channels must be between ${MIN_CHANNELS} and ${MAX_CHANNELS}` });

/** How one sample of a raw format is laid out in bytes. */
export interface RawFormatDescriptor {
  readonly format: RawFormat;
  readonly bytesPerSample: number;
  readonly encoding: 'signed' | 'unsigned' | 'float' | 'mulaw' | 'alaw';
  readonly endianness: 'le' | 'be' | 'none';
  /** The byte value(s) of one sample of silence, for filling gaps. */
  readonly silence: readonly number[];
}

function describe(format: RawFormat): RawFormatDescriptor {
  if (format === 'mulaw') return { format, bytesPerSample: 1, encoding: 'mulaw', endianness: 'none', silence: [0xff] };
  if (format === 'alaw') return { format, bytesPerSample: 1, encoding: 'alaw', endianness: 'none', silence: [0xd5] };
  const m = /^([suf])(\d+)(le|be)?$/.exec(format);
  if (!m) throw new Error(`unreachable: ${format}`);
  const bytesPerSample = Number(m[2]) / 8;
  const encoding = m[1] === 's' ? 'signed' : m[1] === 'u' ? 'unsigned' : 'float';
  const endianness = (m[3] ?? 'none') as 'le' | 'be' | 'none';
  // Unsigned PCM is centred on half range: 0x80 for the most significant byte, 0 for the rest.
  const silence = new Array<number>(bytesPerSample).fill(0);
  if (encoding === 'unsigned') silence[endianness === 'le' ? bytesPerSample - 1 : 0] = 0x80;
  return { format, bytesPerSample, encoding, endianness, silence };
}

/** Byte layout (sample size, encoding, endianness, silence bytes) of every {@link RawFormat}, for computing durations and filling gaps. */
export const RAW_FORMAT_DESCRIPTORS: Readonly<Record<RawFormat, RawFormatDescriptor>> = Object.fromEntries(
  RAW_FORMATS.map((f) => [f, describe(f)]),
) as Record<RawFormat, RawFormatDescriptor>;

/**
 * The audio query parameters of the streaming socket. All optional: a self-describing
 * stream needs none. The rules of §4.3 and the wire reference are checked here, locally,
 * so a bad combination never reaches the network.
 */
export const AudioParamsSchema = z
  .object({
    audio_format: z.string().optional(),
    // The default type message would not say which parameter was not a number.
    sample_rate: z.number({ error: 'sample_rate must be a number' }).optional(),
    num_channels: z.number({ error: 'num_channels must be a number' }).optional(),
  })
  .superRefine((p, ctx) => {
    const fmt = p.audio_format;
    if (fmt !== undefined) {
      if (fmt === 'opus') {
        ctx.addIssue({
          code: 'custom',
          path: ['audio_format'],
          message: "audio_format 'opus' is not accepted: for Opus in an OGG container pass 'ogg'",
        });
        return;
      }
      const isRaw = RawFormatSchema.safeParse(fmt).success;
      const isContainer = ContainerFormatSchema.safeParse(fmt).success;
      if (!isRaw && !isContainer) {
        ctx.addIssue({
          code: 'custom',
          path: ['audio_format'],
          message: `Invalid audio_format='${fmt}'. Valid values: [${[...CONTAINER_FORMATS, ...RAW_FORMATS].join(', ')}]`,
        });
        return;
      }
      if (isRaw && (p.sample_rate === undefined || p.num_channels === undefined)) {
        ctx.addIssue({
          code: 'custom',
          path: [p.sample_rate === undefined ? 'sample_rate' : 'num_channels'],
          message: 'Raw audio formats require sample_rate and num_channels query parameters',
        });
      }
    } else if (p.sample_rate !== undefined || p.num_channels !== undefined) {
      ctx.addIssue({
        code: 'custom',
        path: ['audio_format'],
        message: 'sample_rate and num_channels require audio_format to be specified',
      });
    }
    if (p.sample_rate !== undefined) {
      const r = SampleRateSchema.safeParse(p.sample_rate);
      if (!r.success) {
        ctx.addIssue({
          code: 'custom',
          path: ['sample_rate'],
          message: `Invalid sample_rate=${p.sample_rate}. Valid values: [${SAMPLE_RATES.join(', ')}]`,
        });
      }
    }
    if (p.num_channels !== undefined) {
      const r = NumChannelsSchema.safeParse(p.num_channels);
      if (!r.success) {
        ctx.addIssue({
          code: 'custom',
          path: ['num_channels'],
          message: `Invalid num_channels=${p.num_channels}. Must be between ${MIN_CHANNELS} and ${MAX_CHANNELS}`,
        });
      }
    }
  });
/** The audio query parameters of the streaming socket (`audio_format`, `sample_rate`, `num_channels`, §4.3), as {@link AudioParamsSchema} accepts them. */
export type AudioParams = z.infer<typeof AudioParamsSchema>;

/** A raw PCM/G.711 stream, fully described. */
export interface RawAudioFormat {
  readonly audio_format: RawFormat;
  readonly sample_rate: SampleRate;
  readonly num_channels: number;
}

/** What a source knows about its bytes: raw with parameters, a container, or nothing (auto-detect). */
export type AudioFormat = RawAudioFormat | { readonly audio_format: ContainerFormat } | { readonly audio_format?: undefined };

/** True when `format` names a raw format (and so carries `sample_rate` and `num_channels`). */
export function isRawFormat(format: AudioFormat | undefined): format is RawAudioFormat {
  return format?.audio_format !== undefined && RawFormatSchema.safeParse(format.audio_format).success;
}

/** Bytes in one frame (one sample on every channel) of a raw format. */
export function bytesPerFrame(format: RawAudioFormat): number {
  return RAW_FORMAT_DESCRIPTORS[format.audio_format].bytesPerSample * format.num_channels;
}

/** Bytes per second of a raw format. */
export function bytesPerSecond(format: RawAudioFormat): number {
  return bytesPerFrame(format) * format.sample_rate;
}

/** Milliseconds of audio in `bytes` of a raw format. */
export function bytesToMs(format: RawAudioFormat, bytes: number): number {
  return (bytes / bytesPerSecond(format)) * 1000;
}

/**
 * Bytes in `ms` milliseconds of a raw format: a whole number of sample frames (one sample on
 * every channel), rounded down when `ms` does not fall on a sample boundary (20 ms at 11025 Hz
 * is 220.5 samples, so 220 samples: 440 bytes of s16le mono). The inverse of {@link bytesToMs}
 * on sample boundaries.
 *
 * Throws `InputError('invalid_argument')` when `format` is not a raw format with a positive
 * rate and channel count, or when `ms` is not a positive number or holds no whole sample.
 *
 * ## Example
 * ```ts
 * import { msToBytes } from 'svc-stream';
 *
 * msToBytes({ audio_format: 's16le', sample_rate: 16000, num_channels: 1 }, 20); // 640
 * msToBytes({ audio_format: 'mulaw', sample_rate: 8000, num_channels: 1 }, 100); // 800
 * ```
 */
export function msToBytes(format: RawAudioFormat, ms: number): number {
  if (!isRawFormat(format) || !(format.sample_rate > 0) || !Number.isInteger(format.num_channels) || format.num_channels < 1) {
    throw new InputError('invalid_argument', `msToBytes needs a raw audio format (audio_format, sample_rate, num_channels), got ${JSON.stringify(format)}`, { path: 'format' });
  }
  if (typeof ms !== 'number' || !Number.isFinite(ms) || ms <= 0) throw new InputError('invalid_argument', `ms must be a positive number, got ${String(ms)}`, { path: 'ms' });
  // The epsilon keeps 44100 * 0.07 style products from flooring one sample short.
  const samples = Math.floor((format.sample_rate * ms) / 1000 + 1e-9);
  if (samples < 1) throw new InputError('invalid_argument', `${ms} ms at ${format.sample_rate} Hz holds no whole sample`, { path: 'ms' });
  return samples * bytesPerFrame(format);
}
