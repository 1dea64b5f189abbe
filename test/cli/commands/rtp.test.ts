import { PassThrough, Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import type { CliIo } from '../../../src/cli/command.js';
import { main } from '../../../src/cli/main.js';
import { sendRtpCall } from '../../telephony/helpers.js';

function capture(onWrite?: (text: string) => void): Writable & { text: () => string } {
  let text = '';
  const w = new Writable({
    write(chunk, _enc, cb) {
      text += String(chunk);
      onWrite?.(text);
      cb();
    },
  });
  return Object.assign(w, { text: () => text });
}

describe('svc-stream rtp', () => {
  it('prints its help', async () => {
    const stdout = capture();
    const code = await main(['rtp', '--help'], { stdout, stderr: capture(), stdin: new PassThrough(), env: {} });
    expect(code).toBe(0);
    expect(stdout.text()).toContain('--payload-type PT=codec');
  });

  it('refuses a bad --payload-type with exit 2', async () => {
    const stderr = capture();
    const code = await main(['rtp', '--payload-type', '96=speex'], { stdout: capture(), stderr, stdin: new PassThrough(), env: {} });
    expect(code).toBe(2);
    expect(stderr.text()).toMatch(/invalid_argument: --payload-type 96=speex: unknown codec/);
  });

  it('analyses an RTP call on the embedded emulator and prints NDJSON per call', async () => {
    let resolvePort!: (p: number) => void;
    const port = new Promise<number>((r) => (resolvePort = r));
    const stderr = capture((t) => {
      const m = /listening for RTP on [\d.]+:(\d+)/.exec(t);
      if (m) resolvePort(Number(m[1]));
    });
    const stdout = capture();
    const io: CliIo = { stdout, stderr, stdin: new PassThrough(), env: {} };
    const done = main(['rtp', '--port', '0', '--idle-timeout', '300', '--exit-after', '1', '--json'], io);
    await sendRtpCall(await port, 0xabc, 1, 2);
    expect(await done).toBe(0);
    const lines = stdout.text().trim().split('\n').map((l) => JSON.parse(l) as { type: string; id: string; status?: string; stats?: { received: number }; event?: { type: string } });
    expect(lines[0]).toMatchObject({ type: 'call', id: 'rtp-00000abc', codec: 'PCMU' });
    expect(lines.some((l) => l.type === 'event' && l.event?.type === 'done')).toBe(true);
    expect(lines.find((l) => l.type === 'call_end')).toMatchObject({ type: 'call_end', id: 'rtp-00000abc', status: 'done', duration_ms: 1000, stats: { received: 50, lost: 0 } });
    // As analyze --json ends: a state line saying where the results come from.
    expect(lines.at(-1)).toMatchObject({ type: 'state', id: 'rtp-00000abc', source: 'speech-segments-only' });
  });

  it('--max-legs refuses a second call and says so once on stderr; --frame-ms groups the audio it sends', async () => {
    let resolvePort!: (p: number) => void;
    const port = new Promise<number>((r) => (resolvePort = r));
    const stderr = capture((t) => {
      const m = /listening for RTP on [\d.]+:(\d+)/.exec(t);
      if (m) resolvePort(Number(m[1]));
    });
    const stdout = capture();
    const io: CliIo = { stdout, stderr, stdin: new PassThrough(), env: {} };
    const done = main(['rtp', '--port', '0', '--idle-timeout', '300', '--exit-after', '1', '--max-legs', '1', '--frame-ms', '100', '--json'], io);
    const p = await port;
    // 0xabc's first packet starts the one leg allowed; every packet of 0xdef is refused.
    await Promise.all([sendRtpCall(p, 0xabc, 1, 2), new Promise((r) => setTimeout(r, 50)).then(() => sendRtpCall(p, 0xdef, 1, 2))]);
    expect(await done).toBe(0);
    const lines = stdout.text().trim().split('\n').map((l) => JSON.parse(l) as { type: string; id: string });
    expect(lines.filter((l) => l.type === 'call').map((l) => l.id)).toEqual(['rtp-00000abc']);
    expect(stderr.text().match(/a new call leg was refused because 1 legs are running/g)).toHaveLength(1);
    expect(stderr.text()).toContain('Raise --max-legs');
  });
});
