import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InputError } from '../../src/errors/index.js';
import { probeAudioFile } from 'svc-stream';
import { makeFixtures, type Fixtures } from './fixtures.js';

let fx: Fixtures;
beforeAll(async () => {
  fx = await makeFixtures(['.wav', '.webm', '.mov']);
});
afterAll(() => fx?.cleanup());

async function codeOf(p: Promise<unknown>): Promise<string | undefined> {
  const err = await p.then(() => undefined, (e: unknown) => e);
  expect(err).toBeInstanceOf(InputError);
  return (err as InputError).code;
}

describe('probeAudioFile', () => {
  it('reports size, extension, handling and the demuxer of a good file', async () => {
    const r = await probeAudioFile(fx.file('.webm'));
    expect(r).toMatchObject({ extension: '.webm', handling: { mode: 'passthrough', format: 'webm' }, demuxer: 'matroska,webm' });
    expect(r.size).toBeGreaterThan(0);
    expect((await probeAudioFile(fx.file('.mov'))).handling).toEqual({ mode: 'transcode' });
  });

  it('refuses missing, empty, directory and unknown-extension files with typed errors', async () => {
    expect(await codeOf(probeAudioFile(fx.missing))).toBe('file_not_found');
    expect(((await probeAudioFile(fx.missing).catch((e: unknown) => e)) as InputError).path).toBe(fx.missing);
    expect(await codeOf(probeAudioFile(fx.empty))).toBe('empty_file');
    const d = join(fx.dir, 'folder.wav');
    await mkdir(d);
    expect(await codeOf(probeAudioFile(d))).toBe('invalid_argument');
    expect(await codeOf(probeAudioFile(join(fx.dir, '..', '..', 'etc', 'hostname')))).toMatch(/file_not_found|unsupported_format/);
    expect(await codeOf(probeAudioFile('/etc/hostname'))).toBe('unsupported_format');
  });

  it('refuses undecodable audio with ffmpeg’s words', async () => {
    const err = (await probeAudioFile(fx.corrupt).catch((e: unknown) => e)) as InputError;
    expect(err.code).toBe('corrupt_audio');
    expect(err.message).toMatch(/Invalid data found/);
    expect(err.path).toBe(fx.corrupt);
  });

  it('refuses a passthrough extension holding another container', async () => {
    const err = (await probeAudioFile(fx.mislabelled).catch((e: unknown) => e)) as InputError;
    expect(err.code).toBe('unsupported_format');
    expect(err.message).toMatch(/holds 'mp3' data/);
    // When transcoding, any container ffmpeg reads is fine.
    await expect(probeAudioFile(fx.mislabelled, { transcoding: true })).resolves.toMatchObject({ demuxer: 'mp3' });
  });

  it('can skip the decode check (existence and size are still checked)', async () => {
    await expect(probeAudioFile(fx.corrupt, { decode: false })).resolves.toMatchObject({ demuxer: undefined });
    expect(await codeOf(probeAudioFile(fx.empty, { decode: false }))).toBe('empty_file');
  });
});
