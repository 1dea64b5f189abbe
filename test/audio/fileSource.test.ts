import { chmod, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { VirtualAction, VirtualTimeScheduler } from 'rxjs';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { InputError } from '../../src/errors/index.js';
import { audioMetaOf, fileSource, rechunk } from 'svc-stream';
import { FILE_FORMATS } from '../../src/audio/fileFormats.js';
import { ALL_EXTENSIONS, byteCount, collect, eventually, FIXTURE_SECONDS, makeFixtures, readPausingAfter, SYSTEM_FFMPEG, type Fixtures } from './fixtures.js';
import { wavHeader } from '../internal/wavHeader.js';

let fx: Fixtures;
beforeAll(async () => {
  fx = await makeFixtures();
});
afterAll(() => fx?.cleanup());

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const RAW16K = { audio_format: 's16le', sample_rate: 16000, num_channels: 1 };

/** A canonical 44-byte header for `data` bytes of 16 kHz mono s16le. */

describe('fileSource', () => {
  it('covers every extension of §2.1', () => {
    expect(Object.keys(FILE_FORMATS).sort()).toEqual([...ALL_EXTENSIONS].sort());
  });

  for (const ext of ['.wav', '.mp3', '.ogg', '.flac', '.webm', '.aac', '.aiff']) {
    it(`passes ${ext} through untouched`, async () => {
      const source = fileSource(fx.file(ext));
      expect(audioMetaOf(source)?.format).toEqual({ audio_format: ext.slice(1) });
      const out = Buffer.concat(await collect(source));
      expect(out.equals(await readFile(fx.file(ext)))).toBe(true);
    });
  }

  for (const ext of ['.mp4', '.mov', '.opus']) {
    it(`transcodes ${ext} to s16le`, async () => {
      const source = fileSource(fx.file(ext));
      expect(audioMetaOf(source)?.format).toEqual(RAW16K);
      const bytes = byteCount(await collect(source));
      expect(Math.abs(bytes - FIXTURE_SECONDS * 32000) / (FIXTURE_SECONDS * 32000)).toBeLessThan(0.03);
    });
  }

  it('transcodes anything on request, to the requested target', async () => {
    const source = fileSource(fx.file('.wav'), { transcode: { sampleRate: 8000, channels: 2, format: 'alaw' } });
    expect(audioMetaOf(source)?.format).toEqual({ audio_format: 'alaw', sample_rate: 8000, num_channels: 2 });
    expect(byteCount(await collect(source))).toBe(FIXTURE_SECONDS * 8000 * 2);
    const unknown = join(fx.dir, 'speech.mkv');
    await writeFile(unknown, await readFile(fx.file('.webm')));
    expect(byteCount(await collect(fileSource(unknown, { transcode: true })))).toBeGreaterThan(0);
    // An extension outside §2.1 is whatever ffmpeg reads: transcoded without being asked.
    expect(byteCount(await collect(fileSource(unknown)))).toBeGreaterThan(0);
    // MP3 bytes in a .wav: refused as passthrough, fine when transcoded.
    expect(byteCount(await collect(fileSource(fx.mislabelled, { transcode: true })))).toBeGreaterThan(0);
  });

  it('errors before emitting anything for a missing, empty, corrupt or mislabelled file', async () => {
    for (const [path, code] of [[fx.missing, 'file_not_found'], [fx.empty, 'empty_file'], [fx.corrupt, 'corrupt_audio'], [fx.mislabelled, 'unsupported_format']] as const) {
      let emitted = 0;
      const err = await new Promise<unknown>((resolve) => fileSource(path).subscribe({ next: () => emitted++, error: resolve, complete: () => resolve(undefined) }));
      expect(err).toBeInstanceOf(InputError);
      expect((err as InputError).code).toBe(code);
      // `path` is the file that was refused, not the argument's name.
      expect((err as InputError).path).toBe(path);
      expect(emitted).toBe(0);
    }
  });

  it('throws at once for a target the service refuses', () => {
    expect(() => fileSource(fx.file('.wav'), { transcode: { sampleRate: 12345 as never } })).toThrow(InputError);
    expect(() => fileSource(fx.file('.wav'), { realtime: -1 })).toThrow(InputError);
  });

  it('reads from disk with backpressure: a paused session stops the reads', async () => {
    const big = join(fx.dir, 'big.wav');
    const data = 8 * 1024 * 1024;
    await writeFile(big, Buffer.concat([wavHeader(data), Buffer.alloc(data)]));
    const read = await readPausingAfter(fileSource(big, { chunkSize: 16 * 1024 }), 128 * 1024);
    await eventually(() => read.flow.paused, 5000, 'pause');
    await sleep(150);
    expect(read.emitted()).toBe(128 * 1024);
    read.flow.resume();
    await eventually(() => read.done(), 5000, 'completion');
    expect(read.emitted()).toBe(44 + data); // every byte read is emitted
    read.unsubscribe();
  });

  it('is cold and repeatable', async () => {
    const source = fileSource(fx.file('.flac'));
    const a = byteCount(await collect(source));
    const b = byteCount(await collect(source));
    expect(a).toBe(b);
  });

  it('re-chunks a transcoded file into exact 20 ms chunks', async () => {
    const frames = await collect(fileSource(fx.file('.mp4')).pipe(rechunk({ ms: 20 })));
    expect(frames.slice(0, -1).every((f) => f.byteLength === 640)).toBe(true);
    expect(frames.at(-1)!.byteLength).toBeLessThanOrEqual(640);
  });

  it('realtime implies raw audio, paced on its scheduler: no chunk before its time, the end at the last sample\'s', async () => {
    // Virtual time: the file and ffmpeg are real, the clock of the pacing is the scheduler's.
    const scheduler = new VirtualTimeScheduler(VirtualAction, Infinity);
    const source = fileSource(fx.file('.wav'), { realtime: 10, scheduler });
    expect(audioMetaOf(source)?.format).toEqual(RAW16K);
    const emitted: Array<{ at: number; before: number }> = [];
    let bytes = 0;
    let end: { at: number; error?: unknown } | undefined;
    const sub = source.subscribe({
      next: (chunk) => {
        emitted.push({ at: scheduler.now(), before: bytes });
        bytes += chunk.byteLength;
      },
      error: (error: unknown) => (end = { at: scheduler.now(), error }),
      complete: () => (end = { at: scheduler.now() }),
    });
    try {
      // Run what is due on the virtual clock each time real I/O has had a turn.
      await eventually(() => {
        scheduler.flush();
        return end !== undefined;
      }, 20_000);
    } finally {
      sub.unsubscribe();
    }
    expect(end?.error).toBeUndefined();
    expect(bytes).toBe(FIXTURE_SECONDS * 32000);
    // The chunk starting at byte n is released bytesToMs(n) / rate after the first, never sooner;
    // the stream ends when the last sample's time has come: 2 s of audio at 10x, 200 ms.
    const start = emitted[0]!.at;
    for (const { at, before } of emitted) expect(at - start).toBeGreaterThanOrEqual((before / 32000) * 100 - 1e-6);
    expect(end!.at - start).toBeGreaterThanOrEqual(FIXTURE_SECONDS * 100 - 1e-6);
  });

  describe('transcoding without a separate probe', () => {
    afterEach(() => {
      delete process.env.SVC_FFMPEG_LOG;
    });

    /** A real ffmpeg behind a wrapper that logs each run's arguments, one line per process. */
    async function loggingFfmpeg(): Promise<{ path: string; runs: () => Promise<string[]> }> {
      const path = join(fx.dir, 'ffmpeg-logged.sh');
      const log = join(fx.dir, `ffmpeg-runs-${process.pid}-${Math.random().toString(36).slice(2)}.log`);
      await writeFile(log, '');
      await writeFile(path, `#!/bin/sh\necho "$*" >> "$SVC_FFMPEG_LOG"\nexec ${SYSTEM_FFMPEG} "$@"\n`);
      await chmod(path, 0o755);
      process.env.SVC_FFMPEG_LOG = log;
      return { path, runs: async () => (await readFile(log, 'utf8')).split('\n').filter((l) => l.includes(' -i ')) };
    }

    it('runs ffmpeg once per transcoded subscription and reports the container and duration from it', async () => {
      const ffmpeg = await loggingFfmpeg();
      const headers: unknown[] = [];
      const bytes = byteCount(await collect(fileSource(fx.file('.mp4'), { ffmpegPath: ffmpeg.path, onInput: (h) => headers.push(h) })));
      expect(bytes).toBeGreaterThan(0);
      const runs = await ffmpeg.runs();
      expect(runs).toHaveLength(1);
      // A file is read as fast as ffmpeg decodes: large writes, not one per decoded frame.
      expect(runs[0]).toContain('-flush_packets 0');
      expect(headers).toHaveLength(1);
      expect(headers[0]).toMatchObject({ demuxer: expect.stringContaining('mp4') });
      expect(Math.abs((headers[0] as { durationMs: number }).durationMs - FIXTURE_SECONDS * 1000)).toBeLessThan(100);
    });

    it('still reports corrupt_audio before emitting anything when the transcoder cannot decode the file', async () => {
      const ffmpeg = await loggingFfmpeg();
      for (const options of [{ transcode: true }, { realtime: 10 }] as const) {
        let emitted = 0;
        const err = await new Promise<unknown>((resolve) =>
          fileSource(fx.corrupt, { ...options, ffmpegPath: ffmpeg.path }).subscribe({ next: () => emitted++, error: resolve, complete: () => resolve(undefined) }),
        );
        expect(err).toBeInstanceOf(InputError);
        expect((err as InputError).code).toBe('corrupt_audio');
        expect(emitted).toBe(0);
      }
      expect(await ffmpeg.runs()).toHaveLength(2);
    });

    it('keeps the passthrough decode check, and skips every decode with probe: false', async () => {
      const ffmpeg = await loggingFfmpeg();
      await collect(fileSource(fx.file('.mp3'), { ffmpegPath: ffmpeg.path }));
      expect(await ffmpeg.runs()).toHaveLength(1);
      await expect(collect(fileSource(fx.corrupt, { ffmpegPath: ffmpeg.path, transcode: true, probe: false }))).rejects.toMatchObject({ code: 'ffmpeg_failed' });
    });
  });
});
