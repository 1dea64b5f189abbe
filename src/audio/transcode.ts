// Transcoding to raw PCM (or G.711) with ffmpeg: as an operator over an audio observable, or
// as a source over a file or Node stream. Targets are validated against what the service accepts.
import type { Readable } from 'node:stream';
import { Observable, type OperatorFunction } from 'rxjs';
import { AudioSourceError, InputError } from '../errors/index.js';
import {
  MAX_CHANNELS,
  MIN_CHANNELS,
  NumChannelsSchema,
  RawFormatSchema,
  RAW_FORMATS,
  SAMPLE_RATES,
  SampleRateSchema,
  isRawFormat,
  type AudioFormat,
  type RawAudioFormat,
  type RawFormat,
  type SampleRate,
} from '../schema/audio.js';
import type { FlowControl } from './FlowControl.js';
import { takeFlow } from './sourceFlow.js';
import { runFfmpeg, type FfmpegInput, type FfmpegSpawnInfo, type RunFfmpegOptions } from './ffmpegProcess.js';
import { audioMetaOf, withAudioMeta, type AudioChunk, type AudioObservable, type FlowSlot } from './meta.js';

/** What to transcode to. Every field is optional; the default is `s16le`, 16 kHz, mono. */
export interface TranscodeTarget {
  /** One of the service's sample rates (8000 … 96000). */
  readonly sampleRate?: SampleRate | undefined;
  /** 1 to 8. */
  readonly channels?: number | undefined;
  /** Any raw format of §4.3. */
  readonly format?: RawFormat | undefined;
}

export interface TranscodeOptions extends TranscodeTarget {
  /** The ffmpeg binary; otherwise resolved by `resolveFfmpeg()`. */
  readonly ffmpegPath?: string | undefined;
  /**
   * The format of the input, when ffmpeg cannot tell from the bytes (raw input). The operator
   * form reads it from the upstream observable's metadata when it is not given.
   */
  readonly inputFormat?: AudioFormat | undefined;
  /** A gate to honour as well as the session's (for an operator in between that drops the metadata; the same one goes to the session as `flow`). */
  readonly flow?: FlowControl | undefined;
  /** Called with the pid and command line once ffmpeg runs. */
  readonly onSpawn?: ((info: FfmpegSpawnInfo) => void) | undefined;
}

/**
 * The target when none is given: 16-bit little-endian PCM, 16 kHz, mono. The format must be
 * known before the session connects (it goes into the query string), so it cannot depend on
 * the input; 16 kHz mono is what speech analysis uses and costs 32 kB/s on the wire.
 */
export const DEFAULT_TRANSCODE_TARGET: Readonly<{ sampleRate: SampleRate; channels: number; format: RawFormat }> = {
  sampleRate: 16000,
  channels: 1,
  format: 's16le',
};

/**
 * Check a transcode target against §4.3 and complete it with the defaults.
 * Throws `InputError('invalid_audio_params')` for a rate, channel count or format the service refuses.
 */
export function transcodeTarget(target: TranscodeTarget = {}): RawAudioFormat {
  const sampleRate = target.sampleRate ?? DEFAULT_TRANSCODE_TARGET.sampleRate;
  const channels = target.channels ?? DEFAULT_TRANSCODE_TARGET.channels;
  const format = target.format ?? DEFAULT_TRANSCODE_TARGET.format;
  if (!SampleRateSchema.safeParse(sampleRate).success) {
    throw new InputError('invalid_audio_params', `Invalid sample_rate=${String(sampleRate)}. Valid values: [${SAMPLE_RATES.join(', ')}]`, { path: 'sampleRate' });
  }
  if (!NumChannelsSchema.safeParse(channels).success) {
    throw new InputError('invalid_audio_params', `Invalid num_channels=${String(channels)}. Must be between ${MIN_CHANNELS} and ${MAX_CHANNELS}`, { path: 'channels' });
  }
  if (!RawFormatSchema.safeParse(format).success) {
    throw new InputError('invalid_audio_params', `Invalid raw audio_format='${String(format)}'. Valid values: [${RAW_FORMATS.join(', ')}]`, { path: 'format' });
  }
  return { audio_format: format, sample_rate: sampleRate, num_channels: channels };
}

/** ffmpeg's raw muxers are named like the service's raw formats. */
function outputArgs(target: RawAudioFormat): string[] {
  return ['-map', '0:a:0', '-f', target.audio_format, '-ar', String(target.sample_rate), '-ac', String(target.num_channels)];
}

/** Raw input needs its parameters spelled out; a container is probed by ffmpeg. */
function inputArgs(format: AudioFormat | undefined): string[] {
  if (isRawFormat(format)) return ['-f', format.audio_format, '-ar', String(format.sample_rate), '-ac', String(format.num_channels)];
  return [];
}

/** What only the library's own callers (fileSource) ask of the ffmpeg run. */
type InternalRunOptions = Pick<RunFfmpegOptions, 'onHeader' | 'failedBeforeOutput'>;

function ffmpegSource(input: FfmpegInput, options: TranscodeOptions, inputFormat: AudioFormat | undefined, internal: InternalRunOptions = {}): AudioObservable {
  const target = transcodeTarget(options);
  const slot: FlowSlot = { current: undefined };
  let consumed = false;
  const source = new Observable<AudioChunk>((subscriber) => {
    const flow = takeFlow(slot, options.flow, subscriber);
    if (input.kind === 'readable') {
      if (consumed || input.stream.readableEnded || input.stream.destroyed) {
        subscriber.error(new AudioSourceError('source_error', 'this Readable was already consumed (a Node stream can be read once); create a new source for each subscription'));
        return;
      }
      consumed = true;
    }
    return runFfmpeg({
      ...(options.ffmpegPath !== undefined ? { ffmpegPath: options.ffmpegPath } : {}),
      ...(options.onSpawn ? { onSpawn: options.onSpawn } : {}),
      ...internal,
      inputArgs: inputArgs(inputFormat),
      outputArgs: outputArgs(target),
      input,
      flow,
    }).subscribe(subscriber);
  });
  // ffmpeg's output comes in buffers of their own, never written again.
  return withAudioMeta(source, { format: target, flow: slot, freshBuffers: true });
}

/**
 * Transcode an upstream audio observable with ffmpeg into raw PCM (s16le, 16 kHz, mono unless
 * told otherwise).
 *
 * - Cold: each subscription starts one ffmpeg process and subscribes upstream once.
 * - Emits ffmpeg's output as it comes; completes when upstream completed and ffmpeg exited 0.
 * - Errors with `AudioSourceError('ffmpeg_failed')` carrying the tail of ffmpeg's stderr when
 *   ffmpeg exits non-zero, `AudioSourceError('ffmpeg_not_found')` when no binary works, and
 *   with upstream's error when upstream fails.
 * - Throws `InputError('invalid_audio_params')` at once for a target the service refuses.
 * - Unsubscribing unsubscribes upstream and kills ffmpeg.
 * - Backpressure both ways: the result has a flow slot (a paused session stops reading
 *   ffmpeg's stdout, so ffmpeg blocks), and a full stdin pauses a pull-capable upstream.
 * - The result carries its format (`RawAudioFormat`) for the session.
 *
 * ## Example
 * ```ts
 * import { createReadStream } from 'node:fs';
 * import { fromReadable, transcode } from 'svc-stream';
 *
 * const pcm$ = fromReadable(createReadStream('call.m4a')).pipe(transcode({ sampleRate: 8000, format: 'mulaw' }));
 * pcm$.subscribe((chunk) => console.log(chunk.byteLength));
 * ```
 */
export function transcode(options: TranscodeOptions = {}): OperatorFunction<Uint8Array, Uint8Array> {
  transcodeTarget(options);
  return (upstream) => ffmpegSource({ kind: 'observable', source: upstream }, options, options.inputFormat ?? audioMetaOf(upstream)?.format);
}

/**
 * Transcode a file (ffmpeg opens it) or a Node `Readable` (piped to ffmpeg's stdin) into raw
 * PCM. Same behaviour as {@link transcode}; a `Readable` input makes the source single-use.
 *
 * ## Example
 * ```ts
 * import { transcodeSource } from 'svc-stream';
 *
 * transcodeSource('meeting.mp4', { sampleRate: 16000, channels: 1 })
 *   .subscribe({ next: (chunk) => console.log(chunk.byteLength), error: (err) => console.error(String(err)) });
 * ```
 */
export function transcodeSource(input: string | Readable, options: TranscodeOptions = {}): AudioObservable {
  return typeof input === 'string'
    ? ffmpegSource({ kind: 'file', path: input }, options, options.inputFormat)
    : ffmpegSource({ kind: 'readable', stream: input }, options, options.inputFormat);
}

/**
 * {@link transcodeSource} of a file, with the hooks `fileSource` uses to let the transcoding
 * ffmpeg stand in for a separate probe: its stderr header and its failure before any output.
 */
export function transcodeFile(path: string, options: TranscodeOptions, internal: InternalRunOptions): AudioObservable {
  return ffmpegSource({ kind: 'file', path }, options, options.inputFormat, internal);
}
