// Really decodes audio the emulator receives, with ffmpeg, so durations are true and
// undecodable input is refused the way the service refuses it.
import { spawn } from 'node:child_process';
import { resolveFfmpeg } from '../audio/ffmpegPath.js';

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
  readonly sampleRate?: number;
  /** Output channels; default 1 (downmix). */
  readonly channels?: number;
  /** Input demuxer for headerless input (`s16le`, `mulaw`…) with its rate and channels. */
  readonly rawInput?: { readonly format: string; readonly sampleRate: number; readonly channels: number };
  /** Give up after this long. Default 60 000 ms (the service's batch limit). */
  readonly timeoutMs?: number;
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
