import { existsSync, readFileSync } from 'node:fs';
import { expect, it } from 'vitest';
import { InputError, SAMPLE_FILES, samplePath } from 'svc-stream';
import { runCli } from './cli/runCli.js';

it('samplePath names every shipped sample, and each is listed in package.json files', () => {
  const files = (JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { files: string[] }).files;
  for (const name of SAMPLE_FILES) {
    expect(existsSync(samplePath(name)), name).toBe(true);
    expect(files).toContain(`samples/${name}`);
  }
  expect(() => samplePath('call.mp3' as never)).toThrow(InputError);
});

it('svc-stream emulator --scenario sample plays the shipped scenario', async () => {
  const controller = new AbortController();
  const run = await runCli(['emulator', '--scenario', 'sample'], {
    signal: controller.signal,
    whileRunning: async (stdout) => {
      while (!stdout().includes('SVC_API_KEY=')) await new Promise((r) => setTimeout(r, 20));
      controller.abort();
    },
  });
  expect(run.code).toBe(0);
  expect(run.stdout).toMatch(/^SVC_BASE_URL=/m);
});

it('svc-stream emulator --help points at a section that exists', async () => {
  const run = await runCli(['emulator', '--help']);
  expect(run.stdout).toContain('docs/emulator.md, "Config file"');
  expect(readFileSync(new URL('../docs/emulator.md', import.meta.url), 'utf8')).toMatch(/^## Config file$/m);
});
