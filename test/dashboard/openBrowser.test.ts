// Opening the browser, with real opener processes: a fake `xdg-open` on PATH that succeeds or
// fails, none at all, and no display.
import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openBrowser } from '../../src/dashboard/openBrowser.js';

let dir: string;

async function opener(name: string, body: string): Promise<string> {
  const bin = join(dir, name);
  await import('node:fs/promises').then((fs) => fs.mkdir(bin));
  await writeFile(join(bin, 'xdg-open'), `#!/bin/sh\n${body}\n`);
  await chmod(join(bin, 'xdg-open'), 0o755);
  return bin;
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'svc-open-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('openBrowser on Linux', () => {
  it('is false without a display, and runs no opener (it would start a text browser on the terminal)', async () => {
    const marker = join(dir, 'ran');
    const bin = await opener('nodisplay', `touch ${marker}`);
    expect(await openBrowser('http://127.0.0.1:1/', 'linux', { PATH: bin })).toBe(false);
    await expect(import('node:fs/promises').then((fs) => fs.access(marker))).rejects.toThrow();
  });

  it('is true when the opener exits 0, with the URL as its argument', async () => {
    const out = join(dir, 'url.txt');
    const bin = await opener('ok', `echo "$1" > ${out}; exit 0`);
    expect(await openBrowser('http://127.0.0.1:9/x', 'linux', { PATH: bin, DISPLAY: ':0' })).toBe(true);
    expect((await import('node:fs/promises').then((fs) => fs.readFile(out, 'utf8'))).trim()).toBe('http://127.0.0.1:9/x');
  });

  it('is false when the opener finds no browser (xdg-open exits 3)', async () => {
    const bin = await opener('nobrowser', 'exit 3');
    expect(await openBrowser('http://127.0.0.1:1/', 'linux', { PATH: bin, WAYLAND_DISPLAY: 'wayland-0' })).toBe(false);
  });

  it('is false when there is no opener at all', async () => {
    expect(await openBrowser('http://127.0.0.1:1/', 'linux', { PATH: join(dir, 'empty'), DISPLAY: ':0' })).toBe(false);
  });
});
