// `svc-stream emulator` started so that the next step can rely on it, with no sleep: a command
// run with its variables (and the emulator stopped with it), or the variables written to a file
// whole once it listens, removed when it stops. Through the real bin, as a user runs it (Node 20
// reads a `--env-file` anywhere on its command line, so the flag is `--write-env`).
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, watch } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli } from '../runCli.js';

const bin = fileURLToPath(new URL('../../../bin/svc-stream.js', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'svc-emulator-cli-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Node code that prints the emulator's variables and asks the emulator for its presets. */
const PROBE = `
const r = await fetch(process.env.SVC_BASE_URL + '/api/svc-2-batch/list-presets', { headers: { 'x-api-key': process.env.SVC_API_KEY } });
console.log(JSON.stringify({ base: process.env.SVC_BASE_URL, key: process.env.SVC_API_KEY, platform: process.env.SVC_PLATFORM_URL, status: r.status }));
process.exit(3);
`;

describe('svc-stream emulator -- COMMAND', () => {
  it('runs the command with the variables, exits with its status, and the emulator stops with it', async () => {
    const r = await new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
      const child = execFile(
        process.execPath,
        [bin, 'emulator', '--scenario', 'sample', '--', process.execPath, '--input-type=module', '-e', PROBE],
        { timeout: 30_000, env: { ...process.env, SVC_API_KEY: '', SVC_BASE_URL: '' } },
        (_err, stdout, stderr) => resolve({ code: child.exitCode, stdout, stderr }),
      );
    });
    expect(r.code).toBe(3);
    const seen = JSON.parse(r.stdout.trim()) as { base: string; key: string; platform: string; status: number };
    expect(seen.base).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(seen.key).toBe('svc-emulator-dev-key');
    expect(seen.platform).toBe(`${seen.base}/platform`);
    expect(seen.status).toBe(200);
    // Stopped with it: nothing listens there any more.
    await expect(fetch(`${seen.base}/api/svc-2-batch/list-presets`)).rejects.toThrow();
  }, 40_000);

  it('a command that cannot be run: 127 and one line', async () => {
    const r = await runCli(['emulator', '--', 'svc-no-such-command-here']);
    expect(r.code).toBe(127);
    expect(r.stderr).toContain('svc-stream: cannot run svc-no-such-command-here: no such command');
  });
});

describe('svc-stream emulator --write-env', () => {
  it('the file appears whole once the emulator listens, and is removed when it stops', async () => {
    const file = join(dir, 'svc.env');
    const controller = new AbortController();
    let seen = '';
    const r = await runCli(['emulator', '--write-env', file], {
      signal: controller.signal,
      whileRunning: async () => {
        // Wait on the directory, not the clock: the file's one appearance is a rename.
        await new Promise<void>((resolve) => {
          const w = watch(dir, () => {
            if (!existsSync(file)) return;
            w.close();
            resolve();
          });
          if (existsSync(file)) {
            w.close();
            resolve();
          }
        });
        seen = readFileSync(file, 'utf8');
        const base = /^SVC_BASE_URL=(.+)$/m.exec(seen)![1]!;
        const key = /^SVC_API_KEY=(.+)$/m.exec(seen)![1]!;
        // It listens by the time the file exists.
        expect((await fetch(`${base}/api/svc-2-batch/list-presets`, { headers: { 'x-api-key': key } })).status).toBe(200);
        controller.abort();
      },
    });
    expect(r.code).toBe(0);
    expect(seen.trim().split('\n').map((l) => l.split('=')[0])).toEqual(['SVC_BASE_URL', 'SVC_API_KEY', 'SVC_PLATFORM_URL', 'SVC_ACCOUNT_UUID', 'SVC_PLATFORM_API_KEY']);
    expect(existsSync(file)).toBe(false);
  });

  it('through the real bin on Node 20 (which reads --env-file anywhere on its command line)', async () => {
    const file = join(dir, 'bin.env');
    const r = await new Promise<{ code: number | null; stderr: string }>((resolve) => {
      const child = execFile(process.execPath, [bin, 'emulator', '--write-env', file, '--', process.execPath, '-e', `process.exit(require('fs').existsSync(${JSON.stringify(file)}) ? 0 : 9)`], { timeout: 30_000 }, (_e, _o, stderr) =>
        resolve({ code: child.exitCode, stderr }),
      );
    });
    expect(r.stderr).not.toContain('not found');
    expect(r.code).toBe(0);
    expect(existsSync(file)).toBe(false);
  }, 40_000);
});
