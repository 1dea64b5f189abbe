import { execFile } from 'node:child_process';
import { createReadStream, existsSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import prism from 'prism-media';
import { Subject } from 'rxjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AudioSourceError, InputError } from '../../src/errors/index.js';
import { FlowControl } from '../../src/audio/FlowControl.js';
import { audioMetaOf, fromAsyncIterable, fromReadable, transcode, transcodeSource, type FfmpegSpawnInfo } from 'svc-stream';
import { transcodeTarget } from '../../src/audio/transcode.js';
import { byteCount, collect, eventually, FIXTURE_SECONDS, makeFixtures, processGone, SYSTEM_FFMPEG, type Fixtures } from './fixtures.js';

let fx: Fixtures;
let long: string;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const S16_16K_BYTES = FIXTURE_SECONDS * 16000 * 2;

beforeAll(async () => {
  fx = await makeFixtures(['.mp4', '.mp3', '.flac', '.opus']);
  long = join(fx.dir, 'long.wav');
  await promisify(execFile)(SYSTEM_FFMPEG, ['-hide_banner', '-loglevel', 'error', '-y', '-f', 'lavfi', '-i', 'sine=frequency=300:sample_rate=48000:duration=30', '-ac', '2', long]);
});
afterAll(() => fx?.cleanup());

/** Within 3% (codec priming and padding add a few ms). */
const near = (actual: number, expected: number) => expect(Math.abs(actual - expected) / expected).toBeLessThan(0.03);

describe('transcodeTarget', () => {
  it('defaults to s16le 16 kHz mono and checks the service rules', () => {
    expect(transcodeTarget()).toEqual({ audio_format: 's16le', sample_rate: 16000, num_channels: 1 });
    expect(transcodeTarget({ sampleRate: 8000, channels: 2, format: 'alaw' })).toEqual({ audio_format: 'alaw', sample_rate: 8000, num_channels: 2 });
    for (const bad of [{ sampleRate: 50000 }, { channels: 9 }, { channels: 0 }, { channels: 1.5 }, { format: 'opus' }] as const) {
      expect(() => transcodeTarget(bad as never)).toThrow(InputError);
      expect(() => transcode(bad as never)).toThrow(/Invalid/);
    }
  });
});

describe('transcodeSource', () => {
  it('transcodes a file to raw PCM and carries the format', async () => {
    const source = transcodeSource(fx.file('.mp4'));
    expect(audioMetaOf(source)?.format).toEqual({ audio_format: 's16le', sample_rate: 16000, num_channels: 1 });
    const bytes = byteCount(await collect(source));
    near(bytes, S16_16K_BYTES);
    expect(bytes % 2).toBe(0);
    // Cold and repeatable for a file.
    expect(byteCount(await collect(source))).toBe(bytes);
  });

  it('spawns prism-media FFmpeg with our binary and leaves prism’s own resolution alone', async () => {
    const before = Object.getOwnPropertyDescriptor(prism.FFmpeg, 'getInfo');
    let info: FfmpegSpawnInfo | undefined;
    await collect(transcodeSource(fx.file('.opus'), { sampleRate: 48000, channels: 2, onSpawn: (i) => (info = i) }));
    expect(info?.command).toMatch(/ffmpeg$/);
    expect(info?.args.at(-1)).toBe('pipe:1');
    expect(info?.args).toEqual(expect.arrayContaining(['-f', 's16le', '-ar', '48000', '-ac', '2']));
    expect(Object.getOwnPropertyDescriptor(prism.FFmpeg, 'getInfo')).toEqual(before);
  });

  it('reads a Node Readable through stdin, once', async () => {
    const source = transcodeSource(createReadStream(fx.file('.flac')), { sampleRate: 8000, format: 'mulaw' });
    near(byteCount(await collect(source)), FIXTURE_SECONDS * 8000);
    await expect(collect(source)).rejects.toMatchObject({ code: 'source_error', message: expect.stringMatching(/already consumed/) });
  });

  it('turns a non-zero exit into ffmpeg_failed carrying the stderr tail', async () => {
    const err = await collect(transcodeSource(fx.corrupt)).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AudioSourceError);
    const e = err as AudioSourceError;
    expect(e.code).toBe('ffmpeg_failed');
    expect(e.message).toMatch(/exited with code 1/);
    expect(e.message).toMatch(/Invalid data found/);
    expect(e.detail).toMatchObject({ exitCode: 1, stderr: expect.stringMatching(/Invalid data found/) });
  });

  it('kills ffmpeg on unsubscribe mid-transcode, and leaves no process or zombie', async () => {
    let pid: number | undefined;
    const flow = new FlowControl();
    let got = 0;
    const sub = transcodeSource(long, { sampleRate: 48000, channels: 2, flow, onSpawn: (i) => (pid = i.pid) }).subscribe({
      next: (c) => {
        got += c.byteLength;
        flow.pause(); // a slow consumer: ffmpeg fills its stdout pipe and blocks
      },
    });
    await eventually(() => got > 0, 10_000, 'first chunk');
    expect(pid).toBeTypeOf('number');
    await sleep(100);
    expect(processGone(pid!)).toBe(false); // still running, blocked on the pipe
    expect(got).toBeLessThan(1024 * 1024); // 30 s of 48 kHz stereo would be 5.7 MB
    sub.unsubscribe();
    await eventually(() => processGone(pid!), 5000, `ffmpeg ${pid} to be reaped`);
    expect(existsSync(`/proc/${pid}`)).toBe(false);
  });
});

describe('transcode operator', () => {
  it('transcodes raw upstream using its format metadata (s16le 16 kHz → mulaw 8 kHz)', async () => {
    const pcm = new Uint8Array(S16_16K_BYTES);
    const view = new DataView(pcm.buffer);
    for (let i = 0; i < pcm.length / 2; i++) view.setInt16(i * 2, Math.round(8000 * Math.sin(i / 5)), true);
    async function* chunks() {
      for (let at = 0; at < pcm.length; at += 3000) yield pcm.subarray(at, at + 3000);
    }
    const up = fromAsyncIterable(chunks(), { format: { audio_format: 's16le', sample_rate: 16000, num_channels: 1 } });
    const out = up.pipe(transcode({ sampleRate: 8000, format: 'mulaw' }));
    expect(audioMetaOf(out)?.format).toEqual({ audio_format: 'mulaw', sample_rate: 8000, num_channels: 1 });
    expect(byteCount(await collect(out))).toBe(FIXTURE_SECONDS * 8000);
  });

  it('transcodes a container streamed from a Node stream', async () => {
    near(byteCount(await collect(fromReadable(createReadStream(fx.file('.mp3'))).pipe(transcode()))), S16_16K_BYTES);
  });

  it('pauses a pull upstream when ffmpeg stops reading, so memory stays bounded', async () => {
    let pulled = 0;
    async function* endless() {
      const block = new Uint8Array(64 * 1024);
      for (;;) {
        pulled += block.length;
        yield block;
      }
    }
    const out = fromAsyncIterable(endless(), { format: { audio_format: 's16le', sample_rate: 48000, num_channels: 2 } }).pipe(transcode({ sampleRate: 48000, channels: 2 }));
    const flow = new FlowControl();
    audioMetaOf(out)!.flow!.current = flow;
    let got = 0;
    const sub = out.subscribe((c) => {
      got += c.byteLength;
      if (got > 256 * 1024) flow.pause();
    });
    await eventually(() => flow.paused, 10_000, 'pause');
    await sleep(300);
    const held = pulled;
    await sleep(200);
    expect(pulled).toBe(held); // nothing more pulled while paused
    expect(held - got).toBeLessThan(2 * 1024 * 1024); // pipes and ffmpeg's buffers, not the whole stream
    sub.unsubscribe();
  });

  it('passes an upstream error through and kills ffmpeg', async () => {
    const input = new Subject<Uint8Array>();
    let pid: number | undefined;
    const errored = collect(input.pipe(transcode({ inputFormat: { audio_format: 's16le', sample_rate: 16000, num_channels: 1 }, onSpawn: (i) => (pid = i.pid) }))).catch((e: unknown) => e);
    await eventually(() => pid !== undefined, 10_000, 'spawn');
    input.next(new Uint8Array(3200));
    const boom = new Error('mic unplugged');
    input.error(boom);
    expect(await errored).toBe(boom);
    await eventually(() => processGone(pid!), 5000, 'ffmpeg reaped');
  });
});
