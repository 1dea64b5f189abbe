// The audio flags every command that takes a file shares (--format, --rate, --channels,
// --transcode): a person's own recording in any format, raw files included. Streaming
// commands hand them to fileSource; upload commands (events, emotion, job) turn a file the
// service would not take (raw audio, .m4a, …) into a WAV with ffmpeg first.
import { execFile } from 'node:child_process';
import { mkdtemp, open, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, extname, join } from 'node:path';
import { fileSource, type FileSourceOptions } from '../audio/fileSource.js';
import { FILE_FORMATS, RAW_FILE_EXTENSIONS, rawFormatHint } from '../audio/fileFormats.js';
import { probeAudioFile } from '../audio/probeAudioFile.js';
import { sniffContainer, SNIFF_BYTES } from '../internal/sniffContainer.js';
import { checkInputFile } from './sharedOptions.js';
import type { AudioObservable } from '../audio/meta.js';
import { InputError } from '../errors/index.js';
import { resolveFfmpeg } from '../internal/ffmpegPath.js';
import { isRawFormat, type AudioFormat, type RawAudioFormat } from '../schema/audio.js';
import { option } from './options.js';

/** The audio flags, for the one option parser (options.ts). */
export const AUDIO_OPTIONS = {
  format: option.text('F', "the input's audio_format: raw (s16le, mulaw, alaw, …) for a headerless\nfile or stdin, with --rate and --channels; or a container (wav, mp3, …)"),
  rate: option.text('HZ', 'sample_rate of raw input (8000 … 96000)'),
  channels: option.text('N', 'num_channels of raw input (1-8)'),
  transcode: option.flag('transcode with ffmpeg whatever the file is (s16le, 16 kHz, mono)'),
} as const;

/** The values of the audio flags as parsed. */
export interface AudioFlagValues {
  readonly format?: string | undefined;
  readonly rate?: string | undefined;
  readonly channels?: string | undefined;
  readonly transcode?: boolean | undefined;
}

/** The format the flags describe, or undefined without --format. */
export function formatFromFlags(values: AudioFlagValues): AudioFormat | undefined {
  if (values.format === undefined) {
    if (values.rate !== undefined || values.channels !== undefined) throw new InputError('invalid_argument', '--rate and --channels describe raw audio: give --format too', { path: 'format' });
    return undefined;
  }
  const number = (v: string | undefined, flag: string): number | undefined => {
    if (v === undefined) return undefined;
    const n = Number(v);
    if (!/^\d+$/.test(v) || !Number.isSafeInteger(n)) throw new InputError('invalid_argument', `--${flag} ${v}: not a whole number`, { path: flag });
    return n;
  };
  const sampleRate = number(values.rate, 'rate');
  const channels = number(values.channels, 'channels');
  return {
    audio_format: values.format,
    ...(sampleRate !== undefined ? { sample_rate: sampleRate } : {}),
    ...(channels !== undefined ? { num_channels: channels } : {}),
  } as AudioFormat;
}

/**
 * The one check of an audio file named on a command line, before anything starts (no emulator,
 * no `source:` line), in one wording across commands: it exists, is readable and not empty;
 * raw audio needs its format named (`--format`, `--rate`, `--channels`: `unsupported_format`
 * with the flags a raw extension usually needs, naming the file); anything else must be audio
 * ffmpeg decodes (`corrupt_audio`, `unsupported_format`). `transcoding`: the command transcodes
 * or converts the file, so any container ffmpeg reads will do whatever its extension says.
 */
export async function checkAudioInput(file: string, values: AudioFlagValues, transcoding: boolean): Promise<void> {
  checkInputFile(file);
  if (rawFormat(formatFromFlags(values), file) !== undefined) return;
  const extension = extname(file).toLowerCase();
  if (RAW_FILE_EXTENSIONS[extension] !== undefined) throw new InputError('unsupported_format', `${file}: ${rawFormatHint(extension)}`, { path: file });
  // A container the service takes as it is, whose first bytes say so: its header will do (no
  // ffmpeg per file, for a batch of thousands). Anything else: ffmpeg decodes its start.
  const handling = FILE_FORMATS[extension];
  if (handling?.mode === 'passthrough' && sniffContainer(await firstBytes(file)) === handling.format) return;
  await probeAudioFile(file, { transcoding });
}

async function firstBytes(file: string): Promise<Uint8Array> {
  const handle = await open(file, 'r');
  try {
    const { buffer, bytesRead } = await handle.read(Buffer.alloc(SNIFF_BYTES), 0, SNIFF_BYTES, 0);
    return buffer.subarray(0, bytesRead);
  } finally {
    await handle.close();
  }
}

/** Whether an upload command converts `file` before it goes (raw audio, --transcode, an extension outside `accepted`). */
export function uploadConverts(file: string, values: AudioFlagValues, accepted: readonly string[]): boolean {
  const bare = (e: string): string => e.replace(/^\./, '').toLowerCase();
  return values.transcode === true || values.format !== undefined || !accepted.map(bare).includes(bare(extname(file)));
}

/** Whether a streaming command transcodes `file` (asked, paced by the client, or a format the service does not take as it is). */
export function streamTranscodes(file: string, values: AudioFlagValues, paced: boolean): boolean {
  return values.transcode === true || paced || FILE_FORMATS[extname(file).toLowerCase()]?.mode !== 'passthrough';
}

/** The raw format of the flags, when they describe raw audio (a container --format is the file's own business). */
function rawFormat(format: AudioFormat | undefined, file: string): RawAudioFormat | undefined {
  if (format === undefined || !isRawFormat(format)) return undefined;
  if (format.sample_rate === undefined || format.num_channels === undefined) {
    throw new InputError('invalid_argument', `${file}: raw --format ${format.audio_format} needs --rate and --channels`, { path: 'rate' });
  }
  return format;
}

/** A file as the streaming commands read it: raw with its flags, transcoded on --transcode, paced at `realtime`. */
export function fileAudio(file: string, values: AudioFlagValues, realtime?: number | undefined, onInput?: FileSourceOptions['onInput'], probe = true): AudioObservable {
  const raw = rawFormat(formatFromFlags(values), file);
  return fileSource(file, {
    ...(probe ? {} : { probe: false }),
    ...(raw ? { format: raw } : {}),
    ...(values.transcode ? { transcode: true } : {}),
    ...(realtime !== undefined ? { realtime } : {}),
    ...(onInput ? { onInput } : {}),
  });
}

/** A file ready to upload, and how to remove what was made for it. */
export interface PreparedUpload {
  readonly path: string;
  /** True when `path` is a WAV made by ffmpeg from the file. */
  readonly converted: boolean;
  cleanup(): Promise<void>;
}

/**
 * The file to upload for `file`: itself when the service takes its extension (`accepted`),
 * else (raw audio given by the flags, --transcode, or an extension ffmpeg reads but the
 * service does not, such as .m4a) a WAV of it made by ffmpeg in a temporary folder, named
 * after the file. A raw extension without --format is refused with the flags it needs.
 */
export async function prepareUpload(file: string, values: AudioFlagValues, accepted: readonly string[]): Promise<PreparedUpload> {
  const extension = extname(file).toLowerCase();
  const raw = rawFormat(formatFromFlags(values), file);
  if (!raw && RAW_FILE_EXTENSIONS[extension] !== undefined) throw new InputError('unsupported_format', `${file}: ${rawFormatHint(extension)}`, { path: 'format' });
  const bare = (e: string): string => e.replace(/^\./, '').toLowerCase();
  if (!raw && !values.transcode && accepted.map(bare).includes(bare(extension))) return { path: file, converted: false, cleanup: async () => undefined };
  const dir = await mkdtemp(join(tmpdir(), 'svc-upload-'));
  const out = join(dir, `${basename(file, extname(file)) || 'audio'}.wav`);
  const ffmpeg = await resolveFfmpeg();
  const input = raw ? ['-f', raw.audio_format, '-ar', String(raw.sample_rate), '-ac', String(raw.num_channels)] : [];
  const args = ['-hide_banner', '-nostdin', '-loglevel', 'error', ...input, '-i', file, '-map', '0:a:0', '-c:a', 'pcm_s16le', '-y', out];
  const failure = await new Promise<string | undefined>((resolve) => {
    execFile(ffmpeg.path, args, { timeout: 120_000, maxBuffer: 1 << 20, windowsHide: true }, (err, _stdout, stderr) => resolve(err ? String(stderr).trim().split('\n').slice(-3).join('\n') || err.message : undefined));
  });
  if (failure !== undefined) {
    await rm(dir, { recursive: true, force: true });
    throw new InputError('unsupported_format', `${file}: ffmpeg cannot read it as audio${failure ? `\n${failure}` : ''}`, { path: file });
  }
  return { path: out, converted: true, cleanup: () => rm(dir, { recursive: true, force: true }) };
}
