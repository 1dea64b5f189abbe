// `svc-stream sip` against real SIP peers: SIPp places calls (its rtp_stream sends the media),
// once, then 200 at once, and a SIPREC recording session built from RFC 7866's example.

import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { killSpawned, spawned } from '../../cli/spawned.js';
import { sendRtpCall } from '../helpers.js';
import { mulawFile, runSipp } from './sipp.js';
import { startStandIn } from './standIn.js';

const BIN = new URL('../../../bin/svc-stream.js', import.meta.url).pathname;
const METADATA = readFileSync(new URL('../fixtures/sip/rs-metadata.xml', import.meta.url), 'utf8');
let dir = '';
beforeAll(() => void (dir = mkdtempSync(join(tmpdir(), 'svc-sip-'))));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
afterEach(killSpawned);

interface Line {
  readonly type: string;
  readonly id: string;
  readonly [k: string]: unknown;
}

/** `svc-stream sip ARGS --port 0 --json`: its NDJSON lines, the port once it listens, its exit. */
function sip(args: readonly string[], env: Readonly<Record<string, string>> = {}) {
  const child = spawned(process.execPath, [BIN, 'sip', '--port', '0', '--json', ...args], { env: { PATH: process.env['PATH'], ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  const lines: Line[] = [];
  let err = '';
  let buf = '';
  child.stdout!.on('data', (d: Buffer) => {
    buf += d.toString();
    const parts = buf.split('\n');
    buf = parts.pop()!;
    for (const p of parts) if (p.trim()) lines.push(JSON.parse(p) as Line);
  });
  const ports: number[] = [];
  const port = new Promise<number>((resolve, reject) => {
    child.stderr!.on('data', (d: Buffer) => {
      err += d.toString();
      for (const m of err.matchAll(/SIP on 127\.0\.0\.1:(\d+)/g)) if (!ports.includes(Number(m[1]))) ports.push(Number(m[1]));
      if (ports.length > 0) resolve(ports[0]!);
    });
    child.on('exit', () => reject(new Error(`svc-stream sip exited before listening: ${err}`)));
  });
  const exited = new Promise<number | null>((r) => child.on('exit', (code) => r(code)));
  return { lines, port, ports, exited, err: () => err };
}

describe('svc-stream sip with SIPp', () => {
  it('answers one SIPp call: its audio analysed, done with its true duration, nothing lost', async () => {
    const run = sip(['--rtp-ports', '44100-44199', '--exit-after', '1']);
    const port = await run.port;
    const sipp = await runSipp('uac-rtp', port, { audio: mulawFile(dir, 3) }, ['-m', '1', '-d', '3300']);
    expect(sipp.code, sipp.errors).toBe(0);
    expect(await run.exited).toBe(0);
    const call = run.lines.find((l) => l.type === 'call')!;
    expect(call).toMatchObject({ codec: 'PCMU', format: { audio_format: 'mulaw', sample_rate: 8000, num_channels: 1 }, metadata: { kind: 'sip', participants: [{ name: 'Caller 1', channel: 1 }] } });
    expect(run.lines.find((l) => l.type === 'sip_end')).toMatchObject({ id: call.id, reason: 'bye' });
    expect(run.lines.find((l) => l.type === 'call_end')).toMatchObject({ id: call.id, status: 'done', duration_ms: 3000, stats: { received: 150, lost: 0 } });
  }, 60_000);

  it('200 SIPp calls at once: every one done with its true duration and no loss', async () => {
    const standIn = await startStandIn();
    try {
      const run = sip(['--rtp-ports', '44200-44999', '--max-calls', '200', '--exit-after', '200', '--base-url', standIn.baseUrl], { SVC_API_KEY: 'sip-test-key' });
      const port = await run.port;
      // 2 s calls, 100 a second: up to 200 at once, over in about 4 s.
      const sipp = await runSipp('uac-rtp', port, { audio: mulawFile(dir, 2) }, ['-m', '200', '-r', '100', '-l', '200', '-d', '2300'], 90_000);
      expect(sipp.code, sipp.errors).toBe(0);
      expect(await run.exited).toBe(0);
      const ends = run.lines.filter((l) => l.type === 'call_end');
      expect(ends).toHaveLength(200);
      expect(ends.filter((e) => e['status'] !== 'done')).toEqual([]);
      expect(new Set(ends.map((e) => e['duration_ms']))).toEqual(new Set([2000]));
      expect(ends.filter((e) => (e['stats'] as { lost: number }).lost !== 0)).toEqual([]);
      expect(standIn.sessions).toBe(200);
    } finally {
      await standIn.close();
    }
  }, 120_000);

  it('--workers 2: each worker answers on a port of its own, the primary adds up their counts', async () => {
    const run = sip(['--workers', '2', '--rtp-ports', '45400-45599', '--exit-after', '2']);
    await run.port;
    await expect.poll(() => run.ports.length, { timeout: 5_000 }).toBe(2);
    const audio = mulawFile(dir, 2);
    const results = await Promise.all(run.ports.map((p) => runSipp('uac-rtp', p, { audio }, ['-m', '1', '-d', '2300'])));
    expect(results.map((r) => r.code)).toEqual([0, 0]);
    expect(await run.exited).toBe(0);
    const ends = run.lines.filter((l) => l.type === 'call_end');
    expect(ends.map((e) => [e['status'], e['duration_ms']])).toEqual([
      ['done', 2000],
      ['done', 2000],
    ]);
    expect(run.err()).toMatch(/invites 2, answered 2, busy 0/);
  }, 60_000);

  it('a SIPREC recording session (RFC 7866) from SIPp: one stereo session with both participants named, its metadata update followed', async () => {
    const run = sip(['--rtp-ports', '45000-45099', '--exit-after', '1']);
    const port = await run.port;
    const update = METADATA.replace('>Bob<', '>Robert<');
    const sipp = runSipp('siprec-src', port, { audio: mulawFile(dir, 3), metadata: METADATA, update }, ['-m', '1', '-d', '2300']);
    // SIPp plays Alice's stream (label 1); Bob's (label 2, the second port of the range's first call) is
    // sent here, once the call is answered (its `call` line: both ports are open).
    await expect.poll(() => run.lines.some((l) => l.type === 'call'), { timeout: 10_000 }).toBe(true);
    await sendRtpCall(45002, 0xb0b, 3, 20, 40_000);
    const done = await sipp;
    expect(done.code, done.errors).toBe(0);
    expect(await run.exited).toBe(0);
    const call = run.lines.find((l) => l.type === 'call')!;
    expect(call).toMatchObject({
      title: 'Alice <sip:alice@atlanta.com> & Bob <sip:bob@biloxi.com>',
      format: { audio_format: 'mulaw', sample_rate: 8000, num_channels: 2 },
      metadata: {
        kind: 'siprec',
        recording: { sessionId: 'hVpd7YQgRW2nD22h7q60JQ==' },
        participants: [
          { name: 'Alice', aor: 'sip:alice@atlanta.com', channel: 1, label: '1' },
          { name: 'Bob', aor: 'sip:bob@biloxi.com', channel: 2, label: '2' },
        ],
      },
    });
    const meta = run.lines.find((l) => l.type === 'metadata') as { metadata: { participants: Array<{ name: string }> } } | undefined;
    expect(meta?.metadata.participants.map((p) => p.name)).toEqual(['Alice', 'Robert']);
    expect(run.lines.find((l) => l.type === 'call_end')).toMatchObject({ id: call.id, status: 'done' });
  }, 60_000);
});


