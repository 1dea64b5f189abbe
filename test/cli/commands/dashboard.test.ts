// `svc-stream dashboard` in-process with captured I/O, against the embedded emulator.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { get } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough, Writable } from 'node:stream';
import { afterAll, describe, expect, it } from 'vitest';
import { dashboardCommand } from '../../../src/cli/commands/dashboard.js';
import type { CliIo } from '../../../src/cli/command.js';
import { connectSse } from '../../dashboard/sseClient.js';

function capture(): Writable & { text: () => string } {
  let text = '';
  const w = new Writable({ write(chunk, _enc, cb) { text += String(chunk); cb(); } });
  return Object.assign(w, { text: () => text });
}

function cli() {
  const stdout = capture();
  const stderr = capture();
  const controller = new AbortController();
  const io: CliIo = { stdout, stderr, stdin: new PassThrough(), env: {}, signal: controller.signal };
  return { io, stdout, stderr, controller };
}

async function urlOf(out: { text: () => string }): Promise<string> {
  const printed = (): RegExpExecArray | null => /svc-stream dashboard: (http:\/\/127\.0\.0\.1:\d+\/)\n/.exec(out.text());
  await expect.poll(() => printed() !== null, { timeout: 10_000, interval: 20, message: 'no URL printed' }).toBe(true);
  return printed()![1]!;
}

function getJson(url: string): Promise<any> {
  return new Promise((resolve, reject) => {
    get(url, { agent: false }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (body += c));
      res.on('end', () => resolve(JSON.parse(body)));
    }).on('error', reject);
  });
}

const dir = mkdtempSync(join(tmpdir(), 'svc-dashboard-cli-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('svc-stream dashboard', () => {
  it('prints its usage', async () => {
    const t = cli();
    expect(await dashboardCommand.run(['--help'], t.io)).toBe(0);
    expect(t.stdout.text()).toContain('Usage: svc-stream dashboard [FILE] [options]');
    expect(t.stdout.text()).toContain('--exit-when-done');
  });

  it('refuses bad arguments before starting anything: exit 2, one line naming the flag or file', async () => {
    const bad = join(dir, 'bad.config.json');
    writeFileSync(bad, JSON.stringify({ stt: { custom_terms: [{ term: '' }] } }));
    const refused = async (argv: string[], line: RegExp): Promise<void> => {
      const t = cli();
      expect(await dashboardCommand.run(argv, t.io)).toBe(2);
      expect(t.stderr.text().split('\n')[0]).toMatch(line);
      expect(t.stdout.text()).toBe('');
      expect(t.stderr.text()).not.toContain('embedded emulator');
    };
    await refused(['samples/call.wav', '--speed', '0'], /^svc-stream: invalid_argument: --speed expects a number > 0, got '0'$/);
    await refused(['samples/call.wav', '--port', 'x'], /^svc-stream: invalid_argument: --port expects an integer from 0 to 65535, got 'x'$/);
    await refused(['samples/nope.wav'], /^svc-stream: file_not_found: samples\/nope\.wav: no such file$/);
    await refused(['samples/call.wav', '--config', bad], /^svc-stream: invalid_config: invalid config at stt\.custom_terms\.0\.term/);
    await refused(['a.wav', 'b.wav'], /^svc-stream: invalid_argument: dashboard takes one FILE, got 2$/);
  });

  it('with no FILE serves the sample call with its config, waits for a page, and stops on Ctrl-C', async () => {
    const t = cli();
    const exit = dashboardCommand.run(['--no-open'], t.io);
    const url = await urlOf(t.stdout);
    const state = await getJson(`${url}state`);
    expect(state).toMatchObject({ title: 'call.wav', started: false, status: 'connecting' });
    expect(t.stderr.text()).toMatch(/the emulator plays .*samples\/call\.scenario\.json/);
    expect(t.stderr.text()).toContain('the session starts when the page loads (1x live pace); Ctrl-C to stop');
    t.controller.abort();
    expect(await exit).toBe(0);
    await expect(getJson(`${url}state`)).rejects.toMatchObject({ code: 'ECONNREFUSED' });
  });

  it('exits 1 with the code when the session fails; a connected page is sent the end first', async () => {
    const scenario = join(dir, 'fail.scenario.json');
    // A failure no reconnect can cure (a 1011 would be, since sessions reconnect and resume).
    writeFileSync(scenario, JSON.stringify({ faults: [{ at: 'audio', at_ms: 2000, action: 'close', code: 4002, error: 'engine crashed' }] }));
    const t = cli();
    const exit = dashboardCommand.run(['samples/call.wav', '--scenario', scenario, '--speed', '20', '--no-open', '--start-now', '--exit-when-done'], t.io);
    const url = await urlOf(t.stdout);
    const page = await connectSse(`${url}sessions/session/events`);
    await page.closed;
    expect(await exit).toBe(1);
    const end = page.messages.at(-1)!;
    expect(end).toMatchObject({ event: 'end', data: { status: 'failed', error: { code: expect.any(String) } } });
    expect(page.messages.some((m) => m.event === 'event' && m.data.type === 'error' && m.data.error === 'engine crashed')).toBe(true);
    expect(t.stderr.text()).toContain(`svc-stream: ${end.data.error.code}: `);
  });

  it('--start-now --exit-when-done exits when the session is done, with no page connected', async () => {
    const t = cli();
    const exit = dashboardCommand.run(['samples/call.wav', '--config', 'samples/call.config.json', '--speed', '40', '--no-open', '--start-now', '--exit-when-done'], t.io);
    expect(await exit).toBe(0);
    expect(t.stderr.text()).toContain('session done (38.5 s of audio)');
  }, 20_000);

  it('without --no-open, where no browser can be opened (no display), says so and prints the URL', async () => {
    const t = cli();
    const exit = dashboardCommand.run(['--speed', '20'], t.io);
    const url = await urlOf(t.stdout);
    await expect.poll(() => t.stderr.text(), { timeout: 10_000, interval: 20 }).toContain('no browser could be opened');
    expect(t.stderr.text()).toContain(`svc-stream: no browser could be opened from here; open ${url} in yours`);
    t.controller.abort();
    expect(await exit).toBe(0);
  });
});
