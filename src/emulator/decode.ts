// Really decodes audio the emulator receives, with ffmpeg, so durations are true and
// undecodable input is refused the way the service refuses it.
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import type { ContainerFormat } from '../schema/audio.js';
import { resolveFfmpeg } from '../internal/ffmpegPath.js';

export interface DecodedAudio {
  /** Mono (or `channels`) s16 samples, interleaved. */
  readonly samples: Int16Array;
  readonly sampleRate: number;
  readonly channels: number;
  /** True duration of the decoded audio in milliseconds. */
  readonly durationMs: number;
}

export class DecodeFailure extends Error {
  override readonly name = 'DecodeFailure';
}

export interface DecodeOptions {
  /** Output rate. Default 16000. */
  readonly sampleRate?: number | undefined;
  /** Output channels; default 1 (downmix). */
  readonly channels?: number | undefined;
  /** Input demuxer for headerless input (`s16le`, `mulaw`…) with its rate and channels. */
  readonly rawInput?: { readonly format: string; readonly sampleRate: number; readonly channels: number } | undefined;
  /** Give up after this long. Default 60 000 ms (the service's batch limit). */
  readonly timeoutMs?: number | undefined;
}

/**
 * Decode a file path or bytes to s16le PCM. Rejects with DecodeFailure (carrying the tail of
 * ffmpeg's stderr) when the input cannot be decoded or yields no audio.
 */
export async function decodeAudio(input: string | Uint8Array, options: DecodeOptions = {}): Promise<DecodedAudio> {
  const ffmpeg = await resolveFfmpeg();
  const sampleRate = options.sampleRate ?? 16_000;
  const channels = options.channels ?? 1;
  const args = ['-hide_banner', '-nostdin', '-v', 'error'];
  if (options.rawInput) {
    // G.711 demuxers are named mulaw/alaw in ffmpeg.
    args.push('-f', options.rawInput.format, '-ar', String(options.rawInput.sampleRate), '-ac', String(options.rawInput.channels));
  }
  args.push('-i', typeof input === 'string' ? input : 'pipe:0', '-f', 's16le', '-acodec', 'pcm_s16le', '-ar', String(sampleRate), '-ac', String(channels), 'pipe:1');
  const child = spawn(ffmpeg.path, args, { stdio: ['pipe', 'pipe', 'pipe'] });
  const out: Buffer[] = [];
  let err = '';
  child.stdout.on('data', (c: Buffer) => out.push(c));
  child.stderr.on('data', (c: Buffer) => {
    err = (err + c.toString('utf8')).slice(-2000);
  });
  child.stdin.on('error', () => undefined);
  if (typeof input === 'string') child.stdin.end();
  else child.stdin.end(Buffer.from(input.buffer, input.byteOffset, input.byteLength));
  const timeoutMs = options.timeoutMs ?? 60_000;
  const code = await new Promise<number | null>((resolve, reject) => {
    const t = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new DecodeFailure(`decoding took longer than ${timeoutMs} ms`));
    }, timeoutMs);
    child.on('error', (e) => {
      clearTimeout(t);
      reject(new DecodeFailure(e.message));
    });
    child.on('close', (c) => {
      clearTimeout(t);
      resolve(c);
    });
  });
  const pcm = Buffer.concat(out);
  if (code !== 0) throw new DecodeFailure(err.trim() || `ffmpeg exited with ${code}`);
  if (pcm.length < 2 * channels) throw new DecodeFailure('no audio stream could be decoded');
  const samples = new Int16Array(pcm.buffer, pcm.byteOffset, Math.floor(pcm.length / 2));
  const durationMs = Math.round((samples.length / channels / sampleRate) * 1000);
  return { samples: Int16Array.from(samples), sampleRate, channels, durationMs };
}

/** The ffmpeg demuxer for each self-describing format the streaming endpoint accepts. */
export const CONTAINER_DEMUXERS: Readonly<Record<ContainerFormat, string>> = {
  wav: 'wav',
  mp3: 'mp3',
  ogg: 'ogg',
  flac: 'flac',
  webm: 'matroska',
  aac: 'aac',
  aiff: 'aiff',
};

// The service's auto-detection, shared with the client's check of audio without a format.
export { sniffContainer } from '../internal/sniffContainer.js';

/**
 * Decode a container incrementally: bytes go into one ffmpeg process as they arrive and
 * s16le PCM comes out as ffmpeg produces it. `end()` resolves when ffmpeg has decoded
 * everything, and rejects with DecodeFailure when the input was not decodable.
 */
export class StreamingDecoder {
  private child: ChildProcessWithoutNullStreams | undefined;
  private readonly started: Promise<void>;
  private queue: Buffer[] = [];
  private err = '';
  private outBytes = 0;
  private exit: Promise<number | null> | undefined;
  private disposed = false;
  private startError: Error | undefined;

  constructor(
    format: ContainerFormat,
    private readonly onPcm: (pcm: Buffer) => void,
    readonly sampleRate = 16_000,
  ) {
    this.started = resolveFfmpeg().then((ffmpeg) => {
      if (this.disposed) return;
      const args = ['-hide_banner', '-nostdin', '-v', 'error', '-f', CONTAINER_DEMUXERS[format], '-i', 'pipe:0', '-f', 's16le', '-acodec', 'pcm_s16le', '-ar', String(sampleRate), '-ac', '1', 'pipe:1'];
      const child = spawn(ffmpeg.path, args, { stdio: ['pipe', 'pipe', 'pipe'] });
      this.child = child;
      child.stdout.on('data', (c: Buffer) => {
        this.outBytes += c.length;
        if (!this.disposed) this.onPcm(c);
      });
      child.stderr.on('data', (c: Buffer) => {
        this.err = (this.err + c.toString('utf8')).slice(-2000);
      });
      child.stdin.on('error', () => undefined);
      this.exit = new Promise((resolve) => {
        child.on('error', (e) => {
          this.err ||= e.message;
          resolve(null);
        });
        child.on('close', (c) => resolve(c));
      });
      for (const q of this.queue) child.stdin.write(q);
      this.queue = [];
    }).catch((e: unknown) => {
      this.startError = e instanceof Error ? e : new Error(String(e));
    });
  }

  write(chunk: Uint8Array): void {
    const b = Buffer.from(chunk);
    if (this.child) this.child.stdin.write(b);
    else this.queue.push(b);
  }

  /** No more input; resolves once every sample is out. */
  async end(timeoutMs = 60_000): Promise<void> {
    await this.started;
    // Not a DecodeFailure: no ffmpeg is the emulator's fault, not the audio's.
    if (this.startError) throw this.startError;
    const child = this.child;
    if (!child || !this.exit) throw new DecodeFailure('decoder was disposed');
    child.stdin.end();
    let timer: NodeJS.Timeout | undefined;
    const code = await Promise.race([
      this.exit,
      new Promise<'timeout'>((resolve) => {
        timer = setTimeout(() => resolve('timeout'), timeoutMs);
      }),
    ]);
    clearTimeout(timer);
    if (code === 'timeout') {
      child.kill('SIGKILL');
      throw new DecodeFailure(`decoding took longer than ${timeoutMs} ms`);
    }
    if (code !== 0) throw new DecodeFailure(this.err.trim() || `ffmpeg exited with ${code}`);
    if (this.outBytes < 2) throw new DecodeFailure('no audio stream could be decoded');
  }

  /** Stop ffmpeg (the connection ended). */
  dispose(): void {
    this.disposed = true;
    if (this.child && this.child.exitCode === null) this.child.kill('SIGKILL');
  }
}
