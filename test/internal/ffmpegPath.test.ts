import { chmod, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AudioSourceError } from '../../src/errors/index.js';
import { clearFfmpegCache } from '../../src/internal/ffmpegPath.js';
import { resolveFfmpeg, verifyFfmpeg } from 'svc-stream';

let dir: string;
let good1: string;
let good2: string;
let bad: string;
let notExec: string;
let pathDir: string;

async function script(path: string, body: string, mode = 0o755): Promise<string> {
  await writeFile(path, `#!/bin/sh\n${body}\n`);
  await chmod(path, mode);
  return path;
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'svc-ffpath-'));
  good1 = await script(join(dir, 'good1'), 'echo "ffmpeg version fake-1 Copyright"');
  good2 = await script(join(dir, 'good2'), 'echo "ffmpeg version fake-2 Copyright"');
  bad = await script(join(dir, 'bad'), 'echo "segfault" >&2; exit 3');
  notExec = await script(join(dir, 'not-exec'), 'echo "ffmpeg version x"', 0o644);
  pathDir = join(dir, 'bin');
  await mkdir(pathDir);
  await script(join(pathDir, 'ffmpeg'), 'echo "ffmpeg version on-path Copyright"');
});
afterAll(async () => {
  clearFfmpegCache();
  await rm(dir, { recursive: true, force: true });
});

describe('resolveFfmpeg', () => {
  it('prefers the explicit option over everything', async () => {
    const r = await resolveFfmpeg({ ffmpegPath: good1, env: { FFMPEG_PATH: good2, PATH: pathDir } });
    expect(r).toMatchObject({ path: good1, source: 'option', version: 'ffmpeg version fake-1 Copyright' });
  });

  it('then FFMPEG_PATH', async () => {
    const r = await resolveFfmpeg({ env: { FFMPEG_PATH: good2, PATH: pathDir } });
    expect(r).toMatchObject({ path: good2, source: 'env FFMPEG_PATH' });
  });

  it('falls through a broken option and FFMPEG_PATH to the installed package', async () => {
    const r = await resolveFfmpeg({ ffmpegPath: bad, env: { FFMPEG_PATH: join(dir, 'nope'), PATH: pathDir } });
    expect(r.source).toBe('package @ffmpeg-installer/ffmpeg');
    expect(r.path).toMatch(/@ffmpeg-installer\/linux-x64\/ffmpeg$/);
    expect(r.version).toMatch(/^ffmpeg version/);
  });

  it('skips ffmpeg-static when it is not installed and uses PATH last', async () => {
    const r = await resolveFfmpeg({ env: { PATH: `${join(dir, 'empty')}:${pathDir}` }, packages: ['ffmpeg-static'], fallbackPackages: [] });
    expect(r).toMatchObject({ path: join(pathDir, 'ffmpeg'), source: 'PATH', version: 'ffmpeg version on-path Copyright' });
  });

  it('prefers a system ffmpeg on PATH that is newer than the bundled one', async () => {
    const newer = join(dir, 'newer');
    await mkdir(newer);
    await script(join(newer, 'ffmpeg'), 'echo "ffmpeg version 9.0 Copyright (c) 2000-2099 the FFmpeg developers"');
    const r = await resolveFfmpeg({ env: { PATH: newer } });
    expect(r).toMatchObject({ path: join(newer, 'ffmpeg'), source: 'PATH' });
  });

  it('keeps the bundled ffmpeg over an older system one, or one that prints no release year', async () => {
    const older = join(dir, 'older');
    await mkdir(older);
    await script(join(older, 'ffmpeg'), 'echo "ffmpeg version 3.0 Copyright (c) 2000-2016 the FFmpeg developers"');
    expect((await resolveFfmpeg({ env: { PATH: older } })).source).toBe('package @ffmpeg-installer/ffmpeg');
    expect((await resolveFfmpeg({ env: { PATH: pathDir } })).source).toBe('package @ffmpeg-installer/ffmpeg');
  });

  it('uses the system ffmpeg when the bundled package is not there, whatever its age', async () => {
    const r = await resolveFfmpeg({ env: { PATH: pathDir }, fallbackPackages: ['no-such-ffmpeg-package'] });
    expect(r).toMatchObject({ path: join(pathDir, 'ffmpeg'), source: 'PATH' });
  });

  it('ffmpeg-static, when installed, comes before both', async () => {
    // Not installed here (its install script downloads): it is listed as tried, then skipped.
    const r = await resolveFfmpeg({ env: { PATH: join(dir, 'empty') } });
    expect(r.source).toBe('package @ffmpeg-installer/ffmpeg');
  });

  it('lists every place tried, with the reason, when none works', async () => {
    const err = await resolveFfmpeg({ ffmpegPath: bad, env: { FFMPEG_PATH: notExec, PATH: join(dir, 'empty') }, packages: ['ffmpeg-static', 'no-such-ffmpeg-package'], fallbackPackages: [] }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AudioSourceError);
    const e = err as AudioSourceError;
    expect(e.code).toBe('ffmpeg_not_found');
    expect(e.message).toContain(`option: ${bad} (-version exited with 3)`);
    expect(e.message).toContain(`env FFMPEG_PATH: ${notExec} (not executable)`);
    expect(e.message).toContain('package ffmpeg-static: not installed');
    expect(e.message).toContain('package no-such-ffmpeg-package: not installed');
    expect(e.message).toContain(`PATH: no ffmpeg in ${join(dir, 'empty')}`);
    expect(e.detail).toHaveLength(5);
    // Then the three ways to get one.
    expect(e.message).toContain('npm install @ffmpeg-installer/ffmpeg');
    expect(e.message).toMatch(/system ffmpeg on PATH/);
    expect(e.message).toContain('FFMPEG_PATH=/path/to/ffmpeg');
    // The order of the list is the order of resolution.
    expect((e.detail as string[]).map((line) => line.split(':')[0])).toEqual(['option', 'env FFMPEG_PATH', 'package ffmpeg-static', 'package no-such-ffmpeg-package', 'PATH']);
  });

  it('refuses a binary that is not ffmpeg', async () => {
    const liar = await script(join(dir, 'liar'), 'echo "sox v14"');
    await expect(verifyFfmpeg(liar)).rejects.toThrow(/did not print "ffmpeg version"/);
  });

  it('caches a successful -version check per path', async () => {
    const counter = join(dir, 'count');
    const counted = await script(join(dir, 'counted'), `echo x >> ${counter}; echo "ffmpeg version counted"`);
    await verifyFfmpeg(counted);
    await verifyFfmpeg(counted);
    await resolveFfmpeg({ ffmpegPath: counted });
    const { readFile } = await import('node:fs/promises');
    expect((await readFile(counter, 'utf8')).trim().split('\n')).toHaveLength(1);
  });
});
