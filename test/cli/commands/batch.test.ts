// `svc-stream events|emotion|presets` run in-process with captured I/O.
import { PassThrough, Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { batchCommands } from '../../../src/cli/commands/batch.js';
import type { CliIo } from '../../../src/cli/command.js';
import { audioDir, loggedEmulator, type AudioDir, type LoggedEmulator } from '../../batch/fixtures.js';

function capture(isTTY = false): Writable & { text: () => string; isTTY?: boolean } {
  let text = '';
  const w = new Writable({ write(chunk, _enc, cb) { text += String(chunk); cb(); } });
  return Object.assign(w, { text: () => text, isTTY });
}

function io(env: NodeJS.ProcessEnv, tty = false) {
  const stdout = capture();
  const stderr = capture(tty);
  const value: CliIo = { stdout, stderr, stdin: new PassThrough(), env };
  return { io: value, stdout, stderr };
}

const command = (name: string) => batchCommands.find((c) => c.name === name)!;

let emu: LoggedEmulator;
let files: AudioDir;
let env: NodeJS.ProcessEnv;
beforeAll(async () => {
  files = audioDir();
  emu = await loggedEmulator({ organizations: [{ keys: ['cli-key'], concurrency: 2 }] });
  env = { SVC_BASE_URL: emu.baseUrl, SVC_API_KEY: 'cli-key' };
});
afterAll(async () => {
  await emu?.close();
  files?.remove();
});

describe('svc-stream events', () => {
  it('prints one JSON line per file, a TTY progress line and a failure summary; exits 1', async () => {
    const a = files.tone('a.wav', 1);
    const b = files.tone('b.wav', 1, 150);
    // A WAV header over text: it passes the local check (its header), the service refuses it.
    const garbage = files.bytes('garbage.wav', 'RIFF\x10\x00\x00\x00WAVEthis is not audio at all, only text after a WAV header');
    const t = io(env, true);
    const code = await command('events').run(['--concurrency', '2', a, garbage, b], t.io);
    expect(code).toBe(1);
    const lines = t.stdout.text().trim().split('\n').map((l) => JSON.parse(l) as { path: string; result?: unknown; error?: { code: string } });
    expect(lines).toHaveLength(3);
    const failed = lines.find((l) => l.path === garbage)?.error?.code;
    expect(failed).toEqual(expect.any(String));
    expect(lines.filter((l) => l.result)).toHaveLength(2);
    expect(t.stderr.text()).toContain('\r[3/3] 2 ok, 1 failed');
    expect(t.stderr.text()).toContain(`1 of 3 failed (${failed}: 1)`);
  });

  it('a missing or empty FILE is refused before anything starts: exit 2, one line naming it', async () => {
    const empty = files.bytes('empty.wav', '');
    for (const [file, line] of [
      [empty, `svc-stream: empty_file: ${empty}: the file is empty`],
      ['nope.wav', 'svc-stream: file_not_found: nope.wav: no such file'],
    ] as const) {
      const t = io({});
      expect(await command('events').run([files.tone('e.wav', 1), file], t.io)).toBe(2);
      expect(t.stderr.text()).toBe(`${line}\n`);
      expect(t.stdout.text()).toBe('');
    }
  });

  it('exits 0 when every file succeeds, with no progress line off a TTY; the emulator says the result is its own', async () => {
    const t = io(env);
    expect(await command('emotion').run([files.tone('c.wav', 1)], t.io)).toBe(0);
    // A tone is no speech: its emotion is not measured (Unknown), and its label says what was heard.
    expect(JSON.parse(t.stdout.text())).toMatchObject({ source: 'emulator', label: { source: 'emulator', note: expect.stringContaining('heard: tonal 1.0s') }, result: { emotion: 'Unknown', time_series: [] } });
    expect(t.stderr.text()).toBe("svc-stream: source: emulator: stand-ins computed from the signal, not the service's models\n");
  });

  it('uses an embedded emulator when nothing is configured', async () => {
    const t = io({});
    expect(await command('events').run(['samples/music-applause.wav'], t.io)).toBe(0);
    expect(t.stderr.text()).toContain('embedded emulator');
    expect(JSON.parse(t.stdout.text()).result.probs.Applause).toBeGreaterThan(0.5);
  });

  it('--api-key and --base-url win over the environment', async () => {
    const t = io(env);
    expect(await command('events').run(['--api-key', 'wrong', '--base-url', emu.baseUrl, files.tone('d.wav', 1)], t.io)).toBe(1);
    expect(t.stderr.text()).toContain('invalid_api_key: 1');
  });

  it('usage errors exit 2; --help exits 0', async () => {
    for (const args of [[], ['--concurrency', '30', 'x.wav'], ['--bogus', 'x.wav']]) {
      const t = io(env);
      expect(await command('events').run(args, t.io)).toBe(2);
      expect(t.stderr.text()).toMatch(/^svc-stream: invalid_argument: .+\nUsage: svc-stream events .*\nRun 'svc-stream events --help' for every option\.\n$/);
    }
    const h = io(env);
    expect(await command('emotion').run(['--help'], h.io)).toBe(0);
    expect(h.stdout.text()).toContain('--concurrency N');
  });
});

describe('svc-stream presets', () => {
  it('prints each preset as a JSON line', async () => {
    const t = io(env);
    expect(await command('presets').run(['--from', 'streaming'], t.io)).toBe(0);
    const ids = t.stdout.text().trim().split('\n').map((l) => (JSON.parse(l) as { identifier: string }).identifier);
    expect(ids).toContain('empathy');
  });

  it('prints the error with its code and exits 1', async () => {
    const t = io({ ...env, SVC_API_KEY: 'nope' });
    expect(await command('presets').run([], t.io)).toBe(1);
    expect(t.stderr.text()).toMatch(/^svc-stream: invalid_api_key: /);
  });
});
