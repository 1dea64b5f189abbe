// An audio file as an observable: probed first (exists, non-empty, decodable), then streamed
// from disk with backpressure, passed through or transcoded to raw PCM depending on the format.
import { createReadStream } from 'node:fs';
import { extname } from 'node:path';
import { Observable, type SchedulerLike, type Subscription } from 'rxjs';
import { isRawFormat, type AudioFormat, type RawAudioFormat } from '../schema/audio.js';
import type { FlowControl } from './FlowControl.js';
import { takeFlow } from './sourceFlow.js';
import { FILE_FORMATS, RAW_FILE_EXTENSIONS, rawFormatHint } from './fileFormats.js';
import { InputError } from '../errors/index.js';
import type { FfmpegHeader, FfmpegSpawnInfo } from './ffmpegProcess.js';
import { fromReadable } from './fromReadable.js';
import { pace } from './pace.js';
import { probeAudioFile } from './probeAudioFile.js';
import { transcodeFile, transcodeTarget, type TranscodeTarget } from './transcode.js';
import { withAudioMeta, type AudioChunk, type AudioObservable, type FlowSlot } from './meta.js';

/** Options of {@link fileSource}: transcoding, live-pace release, the decode check, the ffmpeg binary, read size and flow control. */
export interface FileSourceOptions {
  /**
   * The file is headerless raw audio of this format (`.raw`, `.pcm`, `.mulaw`, … or any
   * name): its bytes are emitted as they are, with this format, or transcoded from it. A raw
   * extension without this option is refused with `unsupported_format`, saying what to give.
   */
  readonly format?: RawAudioFormat | undefined;
  /**
   * Transcode to raw PCM even when the endpoint would take the file as it is: `true` for the
   * default target (s16le, 16 kHz, mono), or a target. Files of other extensions are accepted
   * when this is set (ffmpeg reads whatever it can).
   */
  readonly transcode?: boolean | TranscodeTarget | undefined;
  /**
   * Release the audio at live pace (`true` = 1x, or a rate). Pacing needs raw audio, so this
   * transcodes too (to `transcode`'s target, or the default).
   */
  readonly realtime?: boolean | number | undefined;
  /** Where `realtime`'s time comes from (default `asyncScheduler`); a `VirtualTimeScheduler` or `TestScheduler` gives virtual time. */
  readonly scheduler?: SchedulerLike | undefined;
  /**
   * Check that ffmpeg can decode the file before emitting anything (default true). Existence
   * and size are always checked. A passthrough file gets a short decode run first; a
   * transcoded file needs none: the transcoding ffmpeg itself reports a file it cannot
   * decode (`corrupt_audio`, before any output) and its container and duration (`onInput`).
   */
  readonly probe?: boolean | undefined;
  /**
   * Called once, when transcoding with `probe` on, with the input's container (ffmpeg's
   * demuxer names) and duration as the transcoding ffmpeg reports them.
   */
  readonly onInput?: ((header: FfmpegHeader) => void) | undefined;
  /** The ffmpeg binary; otherwise resolved by `resolveFfmpeg()`. */
  readonly ffmpegPath?: string | undefined;
  /** Bytes per read from disk for passthrough files (default 64 KiB). */
  readonly chunkSize?: number | undefined;
  /** A gate to honour as well as the session's (for an operator in between that drops the metadata; the same one goes to the session as `flow`). */
  readonly flow?: FlowControl | undefined;
  /** Called with the pid and command line when ffmpeg transcodes. */
  readonly onSpawn?: ((info: FfmpegSpawnInfo) => void) | undefined;
}

/**
 * Stream an audio file of any format of §2.1.
 *
 * | extension | what is emitted | `format` |
 * |---|---|---|
 * | .wav .mp3 .ogg .flac .webm .aac .aiff | the file's bytes, untouched | `{ audio_format: 'wav' }` etc. |
 * | .mp4 .mov .opus | raw PCM from ffmpeg | `{ audio_format: 's16le', sample_rate: 16000, num_channels: 1 }` |
 * | any, with `transcode` or `realtime` | raw PCM from ffmpeg | the transcode target |
 *
 * - Cold and repeatable: each subscription probes and reads the file anew.
 * - Before emitting anything, errors with `InputError` `file_not_found`, `empty_file`,
 *   `unsupported_format` (unknown extension, or a `.wav` that is not WAV) or `corrupt_audio`
 *   (ffmpeg cannot decode it), or `AudioSourceError('ffmpeg_not_found')`.
 * - Reads with backpressure: a session's flow control (left in the flow slot) pauses the disk
 *   reads or ffmpeg's output, so a fast file into a slow session stays bounded in memory.
 * - Transcoding errors with `AudioSourceError('ffmpeg_failed')` carrying ffmpeg's stderr tail.
 * - Unsubscribing closes the file and kills ffmpeg.
 * - Each chunk is a buffer of its own that the source never writes again (`freshBuffers` in
 *   its metadata), so a session keeps it for a resume without copying it.
 * - Throws `InputError('invalid_audio_params')` at once for a transcode target the service refuses.
 *
 * ## Example
 * ```ts
 * import { fileSource, rechunk } from 'svc-stream';
 *
 * fileSource('meeting.mp4')       // transcoded: s16le 16 kHz mono
 *   .pipe(rechunk({ ms: 100 }))
 *   .subscribe({ next: (chunk) => console.log(chunk.byteLength), error: (err) => console.error(String(err)) });
 * ```
 */
export function fileSource(path: string, options: FileSourceOptions = {}): AudioObservable {
  const extension = extname(path).toLowerCase();
  const raw = options.format;
  if (raw !== undefined && !isRawFormat(raw)) {
    throw new InputError('invalid_audio_params', `format: ${JSON.stringify(raw)} is not a raw format with sample_rate and num_channels`, { path: 'format' });
  }
  // A raw file is what its format says; any other file is what its extension says, and an
  // extension outside §2.1 is whatever ffmpeg can read (it is transcoded).
  const handling = raw ? undefined : FILE_FORMATS[extension];
  const rawExtension = !raw && RAW_FILE_EXTENSIONS[extension] !== undefined;
  const wantsRaw = options.transcode !== undefined && options.transcode !== false;
  const realtime = options.realtime === undefined || options.realtime === false ? undefined : options.realtime === true ? 1 : options.realtime;
  const transcoding = wantsRaw || (realtime !== undefined && !raw) || handling?.mode === 'transcode' || (!raw && !handling && !rawExtension);
  const target = transcoding ? transcodeTarget(typeof options.transcode === 'object' ? options.transcode : {}) : undefined;
  const format: AudioFormat | undefined = target ?? raw ?? (handling?.mode === 'passthrough' ? { audio_format: handling.format } : undefined);
  // Constructed eagerly so a bad rate throws here, not on subscribe.
  const pacing = realtime !== undefined ? pace({ rate: realtime, ...(target ? { format: target } : {}), ...(options.scheduler ? { scheduler: options.scheduler } : {}) }) : undefined;

  const slot: FlowSlot = { current: undefined };
  const read = new Observable<AudioChunk>((subscriber) => {
    const flow = takeFlow(slot, options.flow, subscriber);
    let inner: Subscription | undefined;
    let closed = false;
    const check = options.probe !== false;
    if (rawExtension) {
      subscriber.error(new InputError('unsupported_format', `${path}: ${rawFormatHint(extension)}`, { path: 'format' }));
      return;
    }
    const unknownExtension = !raw && !handling;
    probeAudioFile(path, {
      ...(options.ffmpegPath !== undefined ? { ffmpegPath: options.ffmpegPath } : {}),
      // Transcoding: the transcoder is the decode check (one ffmpeg process, not two). Raw
      // bytes have nothing to check but their size.
      decode: check && !target && !raw,
      transcoding: transcoding || raw !== undefined,
    }).then(
      () => {
        if (closed) return;
        const source = target
          ? transcodeFile(
              path,
              {
                sampleRate: target.sample_rate,
                channels: target.num_channels,
                format: target.audio_format,
                ...(options.ffmpegPath !== undefined ? { ffmpegPath: options.ffmpegPath } : {}),
                ...(options.onSpawn ? { onSpawn: options.onSpawn } : {}),
                ...(flow ? { flow } : {}),
                ...(raw ? { inputFormat: raw } : {}),
              },
              check
                ? {
                    onHeader: (header) => options.onInput?.(header),
                    failedBeforeOutput: (tail, code) =>
                      unknownExtension
                        ? new InputError('unsupported_format', `${path}: ffmpeg cannot read it as audio (extension '${extension || '(none)'}' is not one of §2.1)${tail ? `\n${tail}` : ''}`, { path, detail: { exitCode: code, stderr: tail } })
                        : new InputError('corrupt_audio', `audio file cannot be decoded: ${path}${tail ? `\n${tail}` : ''}`, { path, detail: { exitCode: code, stderr: tail } }),
                  }
                : {},
            )
          : fromReadable(createReadStream(path, { highWaterMark: options.chunkSize ?? 64 * 1024 }), { ...(flow ? { flow } : {}) });
        inner = source.subscribe(subscriber);
      },
      (err: unknown) => {
        if (!closed) subscriber.error(err);
      },
    );
    return () => {
      closed = true;
      inner?.unsubscribe();
    };
  });
  // Each disk read and each read of ffmpeg's output is a buffer of its own, never written again.
  const meta = { ...(format ? { format } : {}), flow: slot, freshBuffers: true };
  if (!pacing) return withAudioMeta(read, meta);
  // pace() pauses the read through its slot when it holds enough audio; the result is push
  // (and passes the same buffers on).
  return withAudioMeta(withAudioMeta(read, meta).pipe(pacing), { ...(format ? { format } : {}), freshBuffers: true });
}
