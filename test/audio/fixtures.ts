// Real audio files for the audio tests, generated at test time with ffmpeg and sox into a
// temporary directory that the caller removes.
import { expect } from 'vitest';
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** The system ffmpeg used to make fixtures (the library may resolve another binary). */
export const SYSTEM_FFMPEG = '/usr/bin/ffmpeg';

/** Seconds of audio in every generated file. */
export const FIXTURE_SECONDS = 2;

/** A speech-like signal: a gliding tone, amplitude-modulated at syllable rate. */
const SPEECHY = "aevalsrc='0.4*sin(2*PI*(180+60*sin(2*PI*3*t))*t)*(0.55+0.45*sin(2*PI*4*t))':s=16000:d=" + FIXTURE_SECONDS;

/** ffmpeg output arguments per extension (input: the mono 16 kHz signal above). */
const ENCODERS: Record<string, string[]> = {
  '.aac': ['-c:a', 'aac', '-b:a', '48k', '-f', 'adts'],
  '.flac': ['-c:a', 'flac'],
  '.mp3': ['-c:a', 'libmp3lame', '-b:a', '48k'],
  '.mp4': ['-c:a', 'aac', '-b:a', '48k'],
  '.mov': ['-c:a', 'aac', '-b:a', '48k'],
  '.ogg': ['-c:a', 'libvorbis'],
  '.opus': ['-c:a', 'libopus', '-b:a', '32k'],
  '.webm': ['-c:a', 'libopus', '-b:a', '32k'],
};

export const ALL_EXTENSIONS = ['.aac', '.aiff', '.flac', '.mp3', '.mp4', '.mov', '.ogg', '.opus', '.wav', '.webm'] as const;

export interface Fixtures {
  readonly dir: string;
  /** `file('.mp3')` is the generated MP3. */
  file(ext: string): string;
  readonly corrupt: string;
  readonly empty: string;
  readonly missing: string;
  /** MP3 bytes in a file named .wav. */
  readonly mislabelled: string;
  cleanup(): Promise<void>;
}

/** Generate one file per extension (wav and aiff with sox, the rest with ffmpeg), in parallel. */
export async function makeFixtures(extensions: readonly string[] = ALL_EXTENSIONS): Promise<Fixtures> {
  const dir = await mkdtemp(join(tmpdir(), 'svc-audio-'));
  const file = (ext: string): string => join(dir, `speech${ext}`);
  await Promise.all(
    extensions.map((ext) => {
      if (ext === '.wav' || ext === '.aiff') {
        return run('sox', ['-n', '-r', '16000', '-c', '1', '-b', '16', file(ext), 'synth', String(FIXTURE_SECONDS), 'sine', '200-1200', 'tremolo', '4', '60']);
      }
      const enc = ENCODERS[ext];
      if (!enc) throw new Error(`no fixture recipe for ${ext}`);
      return run(SYSTEM_FFMPEG, ['-hide_banner', '-loglevel', 'error', '-nostdin', '-y', '-f', 'lavfi', '-i', SPEECHY, ...enc, file(ext)]);
    }),
  );
  const corrupt = join(dir, 'corrupt.wav');
  // Deterministic noise: no RIFF header, nothing any demuxer claims.
  const noise = Buffer.alloc(32 * 1024);
  let x = 12345;
  for (let i = 0; i < noise.length; i++) {
    x = (x * 1103515245 + 12345) >>> 0;
    noise[i] = x >>> 24;
  }
  await writeFile(corrupt, noise);
  const empty = join(dir, 'empty.mp3');
  await writeFile(empty, '');
  const mislabelled = join(dir, 'mislabelled.wav');
  await run(SYSTEM_FFMPEG, ['-hide_banner', '-loglevel', 'error', '-nostdin', '-y', '-f', 'lavfi', '-i', SPEECHY, '-c:a', 'libmp3lame', '-f', 'mp3', mislabelled]);
  return {
    dir,
    file,
    corrupt,
    empty,
    missing: join(dir, 'does-not-exist.flac'),
    mislabelled,
    cleanup: () => rm(dir, { recursive: true, force: true }),
  };
}

/** Subscribe, collect every chunk, resolve on completion (reject on error). */
export function collect(source: import('rxjs').Observable<Uint8Array>): Promise<Uint8Array[]> {
  return new Promise((resolve, reject) => {
    const chunks: Uint8Array[] = [];
    source.subscribe({ next: (c) => chunks.push(c), error: reject, complete: () => resolve(chunks) });
  });
}

/** Total bytes of a list of chunks. */
export function byteCount(chunks: readonly Uint8Array[]): number {
  return chunks.reduce((n, c) => n + c.byteLength, 0);
}

/** Whether a process is gone: not running and not a zombie (kill 0 fails with ESRCH once reaped). */
export function processGone(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return false;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'ESRCH';
  }
}

/** Poll until `check()` holds, or fail after `ms`. */
export async function eventually(check: () => boolean | Promise<boolean>, ms = 5000, what = 'condition'): Promise<void> {
  await expect.poll(check, { timeout: ms, interval: 10, message: `waiting for ${what}` }).toBe(true);
}

/** A subscription to a pull-capable source whose flow is paused once `pauseAfter` bytes were emitted. */
export interface PausedRead {
  readonly flow: import('../../src/audio/FlowControl.js').FlowControl;
  readonly emitted: () => number;
  readonly done: () => boolean;
  readonly unsubscribe: () => void;
}

/** Subscribe as a session does (flow control left in the slot first) and pause after `pauseAfter` bytes. */
export async function readPausingAfter(source: import('svc-stream').AudioObservable, pauseAfter: number): Promise<PausedRead> {
  const { FlowControl } = await import('../../src/audio/FlowControl.js');
  const { audioMetaOf } = await import('svc-stream');
  const flow = new FlowControl();
  audioMetaOf(source)!.flow!.current = flow;
  let emitted = 0;
  let done = false;
  const sub = source.subscribe({
    next: (c) => {
      emitted += c.byteLength;
      if (emitted >= pauseAfter && !flow.paused && emitted - c.byteLength < pauseAfter) flow.pause();
    },
    complete: () => (done = true),
  });
  return { flow, emitted: () => emitted, done: () => done, unsubscribe: () => sub.unsubscribe() };
}

/**
 * Run `read` while watching the event loop turn: one observation of `count()` per turn (an
 * immediate that schedules the next one). Returns what `read` gave and the observations, so a
 * test can check how much was read between two turns.
 */
export async function readWatchingTurns<T>(count: () => number, read: () => Promise<T>): Promise<{ result: T; seen: number[] }> {
  const seen: number[] = [];
  let watching = true;
  const watch = (): void => {
    seen.push(count());
    if (watching) setImmediate(watch);
  };
  setImmediate(watch);
  try {
    return { result: await read(), seen };
  } finally {
    watching = false;
  }
}
