// `svc-stream relay` in-process with captured I/O, against the embedded emulator: two
// sessions listed and joined by id, folded by the relay client, the token and origin checked.
import { copyFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough, Writable } from 'node:stream';
import { lastValueFrom } from 'rxjs';
import { afterAll, describe, expect, it } from 'vitest';
import { splitSession } from 'svc-stream';
import { relayCommand } from '../../src/cli/commands/relay.js';
import type { CliIo } from '../../src/cli/command.js';
import { listRelaySessions, relayEvents, relaySessionUrl } from '../../src/relay/client.js';
import { openSse } from './sseReader.js';

function capture(): Writable & { text: () => string } {
  let text = '';
  const w = new Writable({ write(chunk, _enc, cb) { text += String(chunk); cb(); } });
  return Object.assign(w, { text: () => text });
}

function cli(env: Record<string, string> = {}) {
  const stdout = capture();
  const stderr = capture();
  const controller = new AbortController();
  const io: CliIo = { stdout, stderr, stdin: new PassThrough(), env, signal: controller.signal };
  return { io, stdout, stderr, controller };
}

async function printed(out: { text: () => string }, re: RegExp): Promise<string> {
  await expect.poll(() => re.test(out.text()), { timeout: 10_000, interval: 20, message: `not printed: ${re}` }).toBe(true);
  return re.exec(out.text())![1]!;
}

const dir = mkdtempSync(join(tmpdir(), 'svc-relay-cli-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('svc-stream relay', () => {
  it('relays one session per file, listed and joined by id, to a client with the token; refuses others', async () => {
    for (const name of ['alpha', 'beta']) copyFileSync('samples/call.wav', join(dir, `${name}.wav`));
    copyFileSync('samples/call.scenario.json', join(dir, 'alpha.scenario.json'));
    const t = cli({ SVC_RELAY_TOKEN: 'tok' });
    const exit = relayCommand.run([join(dir, 'alpha.wav'), join(dir, 'beta.wav'), '--config', 'samples/call.config.json', '--speed', '40', '--origin', 'http://app.test', '--exit-when-done'], t.io);
    try {
      const url = await printed(t.stdout, /svc-stream relay: (http:\S+)\n/);
      expect(t.stdout.text()).not.toContain('token');
      expect((await listRelaySessions(url, { token: 'tok' })).map((s) => [s.id, s.title])).toEqual([
        ['alpha', 'alpha.wav'],
        ['beta', 'beta.wav'],
      ]);
      await expect(listRelaySessions(url, { token: 'nope' })).rejects.toMatchObject({ code: 'relay_unauthorized' });
      const evil = await openSse(relaySessionUrl(url, 'alpha'), { authorization: 'Bearer tok', origin: 'http://evil.test' });
      expect(evil.status).toBe(403);
      const [alpha, beta] = await Promise.all(['alpha', 'beta'].map((id) => lastValueFrom(splitSession(relayEvents(relaySessionUrl(url, id), { token: 'tok' })).snapshot$)));
      for (const s of [alpha!, beta!]) {
        expect(s.conversation.type?.name).toBe('Billing dispute');
        expect(s.clips.clips.size).toBe(10);
      }
      expect(await exit).toBe(0);
      expect(t.stderr.text()).toContain('svc-stream: session alpha done');
      expect(t.stderr.text()).toContain('svc-stream: session beta done');
    } finally {
      t.controller.abort();
      await exit.catch(() => undefined);
    }
  }, 30_000);

  it('makes a token when none is set, and refuses bad arguments before listening', async () => {
    // Usage mistakes and input errors: exit 2, one line naming the flag or the file (the one parser's wording).
    for (const [argv, line] of [
      [[], 'svc-stream: invalid_argument: relay needs at least one FILE, or --from URL'],
      [['samples/nope.wav'], 'svc-stream: file_not_found: samples/nope.wav: no such file'],
      [['samples/call.wav', '--origin', 'http://a.test/x'], 'svc-stream: invalid_argument: '],
      [['samples/call.wav', 'samples/call.wav'], 'svc-stream: invalid_argument: two FILEs have the stem call: session ids must differ'],
      [['--from', 'http://redis.test'], 'svc-stream: invalid_argument: --from expects a redis:// or rediss:// URL'],
      [['--from', 'redis://127.0.0.1:1', '--exit-when-done'], 'svc-stream: invalid_argument: --exit-when-done needs a FILE to wait for'],
    ] as const) {
      const c = cli();
      expect(await relayCommand.run(argv, c.io)).toBe(2);
      expect(c.stderr.text().split('\n')[0]).toContain(line);
      expect(c.stdout.text()).toBe('');
    }
    const t = cli();
    const exit = relayCommand.run(['samples/call.wav', '--speed', '40'], t.io);
    const token = await printed(t.stdout, /svc-stream relay token: (\S+) /);
    const url = await printed(t.stdout, /svc-stream relay: (http:\S+)\n/);
    expect(token.length).toBeGreaterThanOrEqual(32);
    expect((await listRelaySessions(url, { token })).map((s) => s.id)).toEqual(['call']);
    t.controller.abort();
    expect(await exit).toBe(0);
  }, 20_000);
});
