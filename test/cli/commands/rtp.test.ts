import { PassThrough, Writable } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import type { CliIo } from '../../../src/cli/command.js';
import { main } from '../../../src/cli/main.js';
import { sendRtpCall } from '../../telephony/helpers.js';
import { hasReusePort } from '../../../src/telephony/rtpSource.js';
import { killSpawned, spawned } from '../spawned.js';

afterEach(killSpawned);

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
    expect(lines.at(-1)).toMatchObject({ type: 'call_end', id: 'rtp-00000abc', status: 'done', duration_ms: 1000, stats: { received: 50, lost: 0 } });
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

describe('svc-stream rtp --workers', () => {
  const bin = new URL('../../../bin/svc-stream.js', import.meta.url).pathname;

  it('runs the calls on two worker processes; a worker killed mid-call ends its call worker_exited, the other call ends done, totals on stderr', async () => {
    const child = spawned(process.execPath, [bin, 'rtp', '--port', '0', '--workers', '2', '--max-calls', '4', '--idle-timeout', '400', '--exit-after', '2', '--json'], {
      env: { PATH: process.env['PATH'] },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    try {
      let out = '';
      let err = '';
      child.stdout!.on('data', (c: Buffer) => (out += c.toString()));
      const seen = (pattern: RegExp, of: () => string): Promise<RegExpExecArray> =>
        new Promise((resolve, reject) => {
          const check = (): void => {
            const m = pattern.exec(of());
            if (m) return resolve(m);
            if (child.exitCode !== null) reject(new Error(`exited before ${pattern}: ${err}`));
          };
          child.stdout!.on('data', check);
          child.stderr!.on('data', check);
          child.once('exit', check);
          check();
        });
      child.stderr!.on('data', (c: Buffer) => (err += c.toString()));
      const ports = await seen(/listening for RTP on [\d.]+:(\d+)[\s\S]*listening for RTP on [\d.]+:(\d+)/, () => err);
      const pid1 = Number((await seen(/worker 1 started \(pid (\d+)\)/, () => err))[1]);
      // Worker i listens on the i-th port printed (each prints its own); find which is worker 1's by the calls it takes.
      const a = sendRtpCall(Number(ports[1]), 0xa1, 2, 10);
      const b = sendRtpCall(Number(ports[2]), 0xb2, 2, 10);
      await seen(/"type":"call","id":"rtp-000000a1"[\s\S]*"type":"call","id":"rtp-000000b2"|"type":"call","id":"rtp-000000b2"[\s\S]*"type":"call","id":"rtp-000000a1"/, () => out);
      process.kill(pid1, 'SIGKILL');
      await Promise.all([a, b]);
      // 'close': every byte of its output read, not only the exit.
      const code = await new Promise<number | null>((r) => child.once('close', r));
      expect(code).toBe(0);
      const ends = out
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as { type: string; id: string; status: string; error?: { code: string } })
        .filter((l) => l.type === 'call_end');
      expect(ends.map((e) => e.status).sort()).toEqual(['done', 'error']);
      expect(ends.find((e) => e.status === 'error')!.error!.code).toBe('worker_exited');
      expect(err).toMatch(/worker 1 \(pid \d+\) exited on SIGKILL; its 1 call\(s\) ended worker_exited; restarting it/);
      expect(err).toMatch(/2 worker\(s\) running, 1 restart\(s\): 2 calls, 1 done, 0 failed, 0 rejected, 1 lost with a worker; datagrams \d+, legs 2/);
    } finally {
      child.kill('SIGKILL');
    }
  }, 60_000);

  it('--reuse-port needs Node 22.12 or later: a usage error before anything starts on this Node', async () => {
    if (hasReusePort()) return;
    const stderr = capture();
    const code = await main(['rtp', '--workers', '2', '--reuse-port'], { stdout: capture(), stderr, stdin: new PassThrough(), env: {} });
    expect(code).toBe(2);
    expect(stderr.text()).toMatch(/--reuse-port needs Node 22\.12 or later/);
  });
});
