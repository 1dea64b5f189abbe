// A person's own recordings through every command that takes a file, in-process against the
// embedded emulator: raw mu-law with --format/--rate/--channels, raw files without them (a
// message that says which flags), .m4a and other formats ffmpeg reads, --transcode, and a
// file that is not audio at all. The recordings are made here with ffmpeg from the sample.
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { lastValueFrom, reduce } from 'rxjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fileSource } from 'svc-stream';
import { runCli } from './runCli.js';

const root = fileURLToPath(new URL('../../', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'svc-own-audio-'));
const MULAW = join(dir, 'call.mulaw');
const RAW = join(dir, 'call.raw');
const M4A = join(dir, 'call.m4a');
const MKV = join(dir, 'call.mkv');
const TEXT = join(dir, 'notes.xyz');

beforeAll(() => {
  copyFileSync(join(root, 'samples/call-8k.mulaw'), MULAW);
  copyFileSync(join(root, 'samples/call-8k.mulaw'), RAW);
  const ff = (...args: string[]): void => void execFileSync('ffmpeg', ['-hide_banner', '-loglevel', 'error', '-y', '-i', join(root, 'samples/call.wav'), '-t', '4', ...args], { timeout: 30_000 });
  ff('-c:a', 'aac', M4A);
  ff('-c:a', 'libopus', MKV);
  writeFileSync(TEXT, 'these are my notes, not audio\n');
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function run(argv: string[], whileRunning?: (stdout: () => string) => Promise<void>) {
  return runCli(argv, whileRunning ? { whileRunning } : {});
}

const RAW_FLAGS = ['--format', 'mulaw', '--rate', '8000', '--channels', '1'];

describe('fileSource with a person\'s own files', () => {
  const bytes = (path: string, options: Parameters<typeof fileSource>[1] = {}) =>
    lastValueFrom(fileSource(path, options).pipe(reduce((n, c) => n + c.byteLength, 0)));

  it('a raw file with its format: the bytes as they are, or transcoded from it', async () => {
    const format = { audio_format: 'mulaw', sample_rate: 8000, num_channels: 1 } as const;
    expect(await bytes(MULAW, { format })).toBe(308_053);
    expect(await bytes(MULAW, { format, transcode: true })).toBe(308_053 * 4); // s16le at 16 kHz: 2 bytes x 2 samples per mu-law byte
  });

  it('a raw extension without a format is refused with what to give', async () => {
    await expect(bytes(MULAW)).rejects.toMatchObject({ code: 'unsupported_format', message: expect.stringContaining('--format mulaw --rate 8000 --channels 1') });
    await expect(bytes(RAW)).rejects.toMatchObject({ code: 'unsupported_format', message: expect.stringContaining('headerless raw audio') });
  });

  it('.m4a and .mkv: transcoded, as anything ffmpeg reads', async () => {
    expect(await bytes(M4A)).toBeGreaterThan(120_000);
    expect(await bytes(MKV)).toBeGreaterThan(120_000);
  });

  it('a file that is not audio: unsupported_format, not a crash or a corrupt_audio', async () => {
    await expect(bytes(TEXT)).rejects.toMatchObject({ code: 'unsupported_format', message: expect.stringContaining('ffmpeg cannot read it as audio') });
  });
});

describe('every command that takes a file', () => {
  it('analyze: raw mu-law with its flags, .m4a, --transcode', async () => {
    const raw = await run(['analyze', MULAW, ...RAW_FLAGS]);
    expect(raw.code).toBe(0);
    expect(raw.stdout.trim().split('\n').at(-1)).toBe('done: 38.5 s of audio');
    const m4a = await run(['analyze', M4A]);
    expect(m4a.code).toBe(0);
    expect(m4a.stdout).toMatch(/done: 4\.\d s of audio/);
    const forced = await run(['analyze', join(root, 'samples/call.wav'), '--transcode', '--json']);
    expect(forced.code).toBe(0);
  });

  it('analyze: a raw file without its flags says which flags it needs, before anything starts (exit 2)', async () => {
    const r = await run(['analyze', MULAW]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/^svc-stream: unsupported_format: \S+call\.mulaw: /);
    expect(r.stderr).toContain('--format mulaw --rate 8000 --channels 1');
    expect(r.stdout).toBe('');
    const half = await run(['analyze', MULAW, '--format', 'mulaw']);
    expect(half.code).toBe(2);
    expect(half.stderr).toContain('needs --rate and --channels');
  });

  it('dashboard: raw mu-law with its flags', async () => {
    // --exit-when-done exits when the session is done, whether a page is connected or not.
    const r = await run(['dashboard', MULAW, ...RAW_FLAGS, '--speed', '50', '--no-open', '--start-now', '--exit-when-done']);
    expect(r.stderr).toContain('session done (38.5 s of audio)');
    expect(r.code).toBe(0);
  }, 30_000);

  it('events and emotion: raw mu-law and .m4a are uploaded as WAV; the line names the file given', async () => {
    const events = await run(['events', MULAW, ...RAW_FLAGS]);
    expect(events.code).toBe(0);
    expect(JSON.parse(events.stdout.trim())).toMatchObject({ path: MULAW, result: { duration_ms: 38_507 } });
    const emotion = await run(['emotion', M4A]);
    expect(emotion.code).toBe(0);
    expect(JSON.parse(emotion.stdout.trim())).toMatchObject({ path: M4A, result: { emotion: expect.any(String) } });
    // Without its flags, refused before anything starts, naming the file and the flags.
    const refused = await run(['events', MULAW]);
    expect(refused.code).toBe(2);
    expect(refused.stdout).toBe('');
    expect(refused.stderr).toMatch(/^svc-stream: unsupported_format: \S+call\.mulaw: .*--format mulaw --rate 8000 --channels 1/);
  });

  it('job submit: raw mu-law with its flags, to completed', async () => {
    const r = await run(['job', 'submit', MULAW, ...RAW_FLAGS, '--wait', '--interval-ms', '50']);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout.trim().split('\n').at(-1)!)).toMatchObject({ status: 'completed' });
  }, 30_000);
});
