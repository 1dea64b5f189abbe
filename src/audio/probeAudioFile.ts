// Checks a file before any session is opened: it exists, is a non-empty regular file, and
// ffmpeg can decode the start of its first audio stream. Cheap: 0.1 s of decoding.
import { execFile } from 'node:child_process';
import { stat } from 'node:fs/promises';
import { extname } from 'node:path';
import { AudioSourceError, InputError } from '../errors/index.js';
import { resolveFfmpeg } from '../internal/ffmpegPath.js';
import { demuxerMatches, FILE_EXTENSIONS, FILE_FORMATS, type FileHandling } from './fileFormats.js';

/** Options of {@link probeAudioFile}: the ffmpeg binary, whether to run the decode check and its timeout, and whether the caller transcodes. */
export interface ProbeOptions {
  readonly ffmpegPath?: string | undefined;
  /** Run the decode check (default true). Existence and size are always checked. */
  readonly decode?: boolean | undefined;
  /**
   * The caller transcodes: accept any extension, and any container ffmpeg reads whatever the
   * extension says.
   */
  readonly transcoding?: boolean | undefined;
  /** Kill the decode check after this long (default 15 s). */
  readonly timeoutMs?: number | undefined;
}

/** What {@link probeAudioFile} found: path, size, extension and how §2.1 handles it, and ffmpeg's demuxer when the decode check ran. */
export interface ProbeResult {
  readonly path: string;
  readonly size: number;
  /** Lower-case, with the dot; '' when there is none. */
  readonly extension: string;
  /** How the extension is handled; undefined for an extension outside §2.1. */
  readonly handling: FileHandling | undefined;
  /** ffmpeg's demuxer names, when the decode check ran. */
  readonly demuxer: string | undefined;
}

const STDERR_LINES = 5;

/**
 * Probe an audio file. Rejects with:
 * - `InputError('file_not_found')` when nothing is at `path`,
 * - `InputError('invalid_argument')` when it is not a regular file,
 * - `InputError('empty_file')` when it has no bytes,
 * - `InputError('unsupported_format')` for an extension outside §2.1, or a passthrough
 *   extension whose bytes are another container (a `.wav` holding MP3), unless `transcoding`,
 * - `InputError('corrupt_audio')` when ffmpeg cannot decode its first audio stream (the
 *   message carries ffmpeg's last stderr lines),
 * - `AudioSourceError('ffmpeg_not_found')` when the decode check has no ffmpeg to run.
 *
 * ## Example
 * ```ts
 * import { probeAudioFile } from 'svc-stream';
 *
 * const info = await probeAudioFile('call.wav');
 * console.log(info.size, info.demuxer); // 320044 wav
 * ```
 */
export async function probeAudioFile(path: string, options: ProbeOptions = {}): Promise<ProbeResult> {
  let size: number;
  try {
    const s = await stat(path);
    if (!s.isFile()) throw new InputError('invalid_argument', `${path} is not a regular file`, { path });
    size = s.size;
  } catch (err) {
    if (err instanceof InputError) throw err;
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') throw new InputError('file_not_found', `audio file not found: ${path}`, { path, cause: err });
    throw new InputError('invalid_argument', `cannot read ${path}: ${(err as Error).message}`, { path, cause: err });
  }
  if (size === 0) throw new InputError('empty_file', `audio file is empty: ${path}`, { path });

  const extension = extname(path).toLowerCase();
  const handling = FILE_FORMATS[extension];
  if (!handling && !options.transcoding) {
    throw new InputError('unsupported_format', `unsupported audio file extension '${extension || '(none)'}' for ${path}. Supported: ${FILE_EXTENSIONS.join(' ')} (or pass transcode: true to let ffmpeg read it)`, { path });
  }
  if (options.decode === false) return { path, size, extension, handling, demuxer: undefined };

  const demuxer = await decodeCheck(path, options);
  if (!options.transcoding && handling?.mode === 'passthrough' && !demuxerMatches(handling.format, demuxer)) {
    throw new InputError('unsupported_format', `${path} has the extension ${extension} but holds '${demuxer}' data; rename it or pass transcode: true`, { path, detail: { demuxer } });
  }
  return { path, size, extension, handling, demuxer };
}

async function decodeCheck(path: string, options: ProbeOptions): Promise<string> {
  const ffmpeg = await resolveFfmpeg(options.ffmpegPath === undefined ? {} : { ffmpegPath: options.ffmpegPath });
  // -v info (not error) so the `Input #0, <demuxer>, from` line tells which container it is.
  const args = ['-hide_banner', '-nostdin', '-nostats', '-v', 'info', '-i', path, '-map', '0:a:0', '-t', '0.1', '-f', 'null', '-'];
  const { code, stderr } = await new Promise<{ code: number | string | null; stderr: string }>((resolve) => {
    execFile(ffmpeg.path, args, { timeout: options.timeoutMs ?? 15_000, maxBuffer: 1 << 20, windowsHide: true, killSignal: 'SIGKILL' }, (err, _stdout, stderr) => {
      const code = err ? ((err as NodeJS.ErrnoException & { code?: number | string }).code ?? (err.killed ? 'killed' : null)) : 0;
      resolve({ code, stderr });
    });
  });
  if (code === 'killed' || code === null) {
    throw new AudioSourceError('ffmpeg_failed', `decoding check of ${path} did not finish`, { detail: { stderr } });
  }
  if (typeof code === 'string') throw new AudioSourceError('ffmpeg_failed', `could not run ${ffmpeg.path}: ${code}`);
  if (code !== 0) {
    const lines = stderr.trim().split('\n').filter((l) => l.trim().length > 0);
    const tail = lines.slice(-STDERR_LINES).join('\n');
    throw new InputError('corrupt_audio', `audio file cannot be decoded: ${path}${tail ? `\n${tail}` : ''}`, { path, detail: { exitCode: code, stderr: tail } });
  }
  return /^Input #0, (.+?), from /m.exec(stderr)?.[1] ?? 'unknown';
}

