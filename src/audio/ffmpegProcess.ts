// One ffmpeg child process as an observable of its stdout: spawned through prism-media's
// FFmpeg with the binary we resolved, stderr drained into a tail, exit status turned into errors.
import type { ChildProcess } from 'node:child_process';
import type { Readable } from 'node:stream';
import type prism from 'prism-media';
import { Observable, type Subscription } from 'rxjs';
import { AudioSourceError, SvcError } from '../errors/index.js';
import { FlowControl } from './FlowControl.js';
import { connectFlow, pullIterator, sourceError } from './sourceFlow.js';
import { resolveFfmpeg } from '../internal/ffmpegPath.js';
import { audioMetaOf, type AudioChunk } from './meta.js';

/** What ffmpeg reads: a file it opens itself, a Node stream, or an upstream observable piped to stdin. */
export type FfmpegInput =
  | { readonly kind: 'file'; readonly path: string }
  | { readonly kind: 'readable'; readonly stream: Readable }
  | { readonly kind: 'observable'; readonly source: Observable<Uint8Array> };

/** Reported once the process is running, e.g. to log the command or watch the pid. */
export interface FfmpegSpawnInfo {
  readonly pid: number | undefined;
  readonly command: string;
  readonly args: readonly string[];
}

export interface RunFfmpegOptions {
  readonly ffmpegPath?: string | undefined;
  /** Arguments before `-i`, e.g. the format of raw input. */
  readonly inputArgs: readonly string[];
  /** Arguments after the input; prism appends `pipe:1`. */
  readonly outputArgs: readonly string[];
  readonly input: FfmpegInput;
  /** The gate read before each stdout chunk. */
  readonly flow: FlowControl | undefined;
  readonly onSpawn?: ((info: FfmpegSpawnInfo) => void) | undefined;
  /**
   * Called once with what ffmpeg's stderr header says about the input (its container and
   * duration). When set, ffmpeg logs at `info` level so it prints that header; this replaces
   * a separate probe process.
   */
  readonly onHeader?: ((header: FfmpegHeader) => void) | undefined;
  /**
   * The error for an ffmpeg that exits non-zero before writing any output (it could not open
   * or decode the input), instead of `ffmpeg_failed`.
   */
  readonly failedBeforeOutput?: ((stderrTail: string, code: number | null) => Error) | undefined;
}

/** What the transcoding ffmpeg's own stderr header tells about its input. */
export interface FfmpegHeader {
  /** ffmpeg's demuxer names for the input, e.g. `mp3` or `mov,mp4,m4a,3gp,3g2,mj2`. */
  readonly demuxer: string;
  /** The input's duration as ffmpeg reports it, in ms; undefined when it says N/A. */
  readonly durationMs: number | undefined;
}

/** Parse the `Input #0, <demuxer>, from` / `Duration: hh:mm:ss.cc` lines of ffmpeg's stderr. */
export function parseFfmpegHeader(stderr: string): FfmpegHeader | undefined {
  const input = /^Input #0, (.+?), from /m.exec(stderr);
  if (!input) return undefined;
  const duration = /^\s*Duration: (\d+):(\d{2}):(\d{2}(?:\.\d+)?)/m.exec(stderr);
  const durationMs = duration ? Math.round((Number(duration[1]) * 3600 + Number(duration[2]) * 60 + Number(duration[3])) * 1000) : undefined;
  return { demuxer: input[1]!, durationMs };
}

/** Bytes of stderr kept for the error message. */
const STDERR_TAIL_BYTES = 4096;

/**
 * Run ffmpeg for one subscriber. Emits stdout chunks, completes when stdout ended and the
 * process exited 0, errors with `AudioSourceError('ffmpeg_failed')` (message and `detail`
 * carry the stderr tail) otherwise. Unsubscribing SIGKILLs the process; Node reaps it.
 */
export function runFfmpeg(options: RunFfmpegOptions): Observable<AudioChunk> {
  return new Observable<AudioChunk>((subscriber) => {
    let closed = false;
    let child: ChildProcess | undefined;
    let stopPull: (() => void) | undefined;
    let upstream: Subscription | undefined;
    let inputStream: Readable | undefined;

    const stopAll = (): void => {
      upstream?.unsubscribe();
      if (inputStream && !inputStream.destroyed) {
        inputStream.unpipe();
        inputStream.destroy();
      }
      // SIGKILL: a transcoder has nothing worth flushing once its reader is gone, and SIGTERM
      // lets ffmpeg try to write a trailer into a pipe nobody reads.
      if (child && child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      child?.stdin?.destroy();
      child?.stdout?.destroy();
    };
    const fail = (err: Error): void => {
      if (closed) return;
      closed = true;
      subscriber.error(err);
    };

    Promise.all([resolveFfmpeg(options.ffmpegPath === undefined ? {} : { ffmpegPath: options.ffmpegPath }), loadPrism()]).then(
      ([ffmpeg, Prism]) => {
        if (closed) return;
        const isFile = options.input.kind === 'file';
        const inputPath = options.input.kind === 'file' ? options.input.path : '-';
        // -nostdin for a file: ffmpeg would otherwise read keyboard commands from our pipe.
        // -flush_packets 0 for a file: ffmpeg fills its 32 KiB output buffer before writing
        // (7x fewer writes and chunks than one per decoded frame); a live input keeps the
        // per-packet flush, where 32 KiB would be a second of latency.
        const args = [
          '-hide_banner', ...(options.onHeader ? ['-nostats', '-loglevel', 'info'] : ['-loglevel', 'error']),
          ...(isFile ? ['-nostdin'] : []),
          ...options.inputArgs, '-i', inputPath,
          ...options.outputArgs,
          ...(isFile ? ['-flush_packets', '0'] : []),
        ];
        let transcoder: prism.FFmpeg;
        try {
          transcoder = spawnWithCommand(Prism, ffmpeg.path, args);
        } catch (err) {
          fail(new AudioSourceError('ffmpeg_failed', `could not start ${ffmpeg.path}: ${err instanceof Error ? err.message : String(err)}`, { cause: err }));
          return;
        }
        const proc = transcoder.process;
        child = proc;
        const stdout = proc.stdout!;
        const stdin = proc.stdin!;
        const stderr = proc.stderr!;

        let tail = Buffer.alloc(0);
        // The header comes first and is short; keep the head until it is parsed.
        let head = options.onHeader ? '' : undefined;
        stderr.on('data', (b: Buffer) => {
          tail = tail.length + b.length > STDERR_TAIL_BYTES * 2 ? Buffer.concat([tail, b]).subarray(-STDERR_TAIL_BYTES) : Buffer.concat([tail, b]);
          if (head === undefined) return;
          head += b.toString('utf8');
          // The header is complete once ffmpeg moves on to the output side.
          if (/^(Stream mapping:|Output #0)/m.test(head) || head.length > 64 * 1024) {
            const header = parseFfmpegHeader(head);
            head = undefined;
            if (header && !closed) options.onHeader!(header);
          }
        });
        const stderrTail = (): string => tail.subarray(-STDERR_TAIL_BYTES).toString('utf8').trim();

        // prism forwards stdin/stdout errors to the duplex. EPIPE on stdin only means ffmpeg
        // stopped reading (it exited or needs no more input): the exit status tells which.
        transcoder.on('error', (err: NodeJS.ErrnoException) => {
          if (err.code === 'EPIPE' || err.code === 'ERR_STREAM_DESTROYED' || closed) return;
          fail(sourceError(err, 'ffmpeg pipe'));
          stopAll();
        });
        stdin.on('error', () => undefined);

        const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
          proc.once('close', (code, signal) => resolve({ code, signal }));
        });
        const exitError = (code: number | null, signal: NodeJS.Signals | null): Error => {
          const text = stderrTail();
          // stdout is a pipe socket: bytesRead counts what ffmpeg wrote, read or not.
          const outputBytes = (stdout as Readable & { bytesRead?: number }).bytesRead ?? 1;
          if (outputBytes === 0 && code !== null && options.failedBeforeOutput) return options.failedBeforeOutput(text.split('\n').slice(-5).join('\n'), code);
          const how = code !== null ? `exited with code ${code}` : `was killed by ${signal ?? 'a signal'}`;
          const lastLines = text.split('\n').slice(-5).join('\n');
          return new AudioSourceError('ffmpeg_failed', `ffmpeg ${how}${lastLines ? `: ${lastLines}` : ' (no stderr output)'}`, {
            detail: { exitCode: code, signal, stderr: text, command: ffmpeg.path, args: [...args, 'pipe:1'] },
          });
        };
        proc.once('error', (err) => fail(new AudioSourceError('ffmpeg_failed', `ffmpeg process error: ${err.message}`, { cause: err })));
        // A failure is reported as soon as the process exits, even while the reader is paused.
        void exited.then(({ code, signal }) => {
          if (code !== 0 && !closed) {
            fail(exitError(code, signal));
            stopAll();
          }
        });

        options.onSpawn?.({ pid: proc.pid, command: ffmpeg.path, args: [...args, 'pipe:1'] });

        const input = options.input;
        if (input.kind === 'file') {
          stdin.end();
        } else if (input.kind === 'readable') {
          inputStream = input.stream;
          input.stream.once('error', (err) => {
            fail(sourceError(err, 'input stream'));
            stopAll();
          });
          input.stream.pipe(stdin);
        } else {
          upstream = feedObservable(input.source, stdin, (err) => {
            fail(err instanceof Error ? err : sourceError(err, 'upstream audio'));
            stopAll();
          });
        }

        stopPull = pullIterator(stdout[Symbol.asyncIterator](), subscriber, options.flow, 'ffmpeg output', stopAll, async () => {
          const { code, signal } = await exited;
          if (code !== 0) throw exitError(code, signal);
        });
      },
      (err: unknown) =>
        fail(err instanceof SvcError ? err : new AudioSourceError('ffmpeg_failed', `could not start ffmpeg: ${err instanceof Error ? err.message : String(err)}`, { cause: err })),
    );

    return () => {
      closed = true;
      if (stopPull) stopPull();
      else stopAll();
    };
  });
}

/**
 * Write an upstream observable into ffmpeg's stdin with backpressure: when stdin's buffer is
 * full, the upstream source is paused through its flow slot (if it has one) until 'drain'.
 */
function feedObservable(source: Observable<Uint8Array>, stdin: NodeJS.WritableStream & { destroyed?: boolean; writableLength?: number }, onError: (err: unknown) => void): Subscription {
  const gate = new FlowControl();
  return connectFlow(audioMetaOf(source)?.flow, gate, () => source.subscribe({
    next: (chunk) => {
      if (stdin.destroyed) return;
      if (!stdin.write(chunk) && !gate.paused) {
        gate.pause();
        stdin.once('drain', () => gate.resume());
      }
    },
    error: onError,
    complete: () => {
      if (!stdin.destroyed) stdin.end();
    },
  })).subscription;
}

// prism-media (several MB once loaded) loads with the first ffmpeg run, not with the package.
let prismModule: Promise<typeof prism> | undefined;
function loadPrism(): Promise<typeof prism> {
  return (prismModule ??= import('prism-media').then((m) => (m as { default?: typeof prism }).default ?? (m as unknown as typeof prism)));
}

/**
 * prism-media's FFmpeg always spawns `FFmpeg.getInfo().command`, a module-wide cache filled by
 * its own search (ffmpeg-static, then `ffmpeg` on PATH); it has no option for the binary. The
 * constructor spawns synchronously, so we swap `getInfo` for the duration of that one call and
 * restore it in `finally`: no other code can observe the swap, prism's cache is never written,
 * and other prism users in the process keep their own resolution.
 */
function spawnWithCommand(Prism: typeof prism, command: string, args: string[]): prism.FFmpeg {
  const FFmpeg = Prism.FFmpeg as typeof prism.FFmpeg & { getInfo: typeof prism.FFmpeg.getInfo };
  const original = Object.getOwnPropertyDescriptor(FFmpeg, 'getInfo');
  Object.defineProperty(FFmpeg, 'getInfo', {
    configurable: true,
    writable: true,
    value: () => ({ command, output: '', version: '' }),
  });
  try {
    return new FFmpeg({ args: [...args] });
  } finally {
    if (original) Object.defineProperty(FFmpeg, 'getInfo', original);
  }
}
