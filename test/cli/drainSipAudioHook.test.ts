// `sip` and `audiohook` as services (issue 39's drain and metrics, issue 42's "the same limits,
// --workers, metrics and drain"): SIGTERM during calls over real sockets. /readyz turns false at
// once, a call that starts after the signal is refused the protocol's way (SIP: 503 with
// Retry-After; AudioHook: 503 before the upgrade), a scrape of /metrics shows the server's own
// figures, the calls in flight end done and the exit status is 0; with a drain deadline shorter
// than the calls, they end `shutdown` and the status is 1.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { connectPeer, interleave, type Peer } from '../telephony/audioHookPeer.js';
import { mulawFile, runSipp } from '../telephony/sip/sipp.js';
import { SipPeer, sdpOffer } from '../telephony/sip/sipPeer.js';
import { spawnCli } from './rtpTestKit.js';
import { killSpawned } from './spawned.js';

afterEach(killSpawned);
let dir = '';
beforeAll(() => void (dir = mkdtempSync(join(tmpdir(), 'svc-drain-'))));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const readyz = async (port: number): Promise<number> => (await fetch(`http://127.0.0.1:${port}/readyz`)).status;
const scrape = async (port: number): Promise<string> => (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
/** The value of one sample of a scrape (`name{labels}`), or undefined. */
const sample = (text: string, name: string): number | undefined => {
  const line = text.split('\n').find((l) => l.startsWith(`${name} `));
  return line === undefined ? undefined : Number(line.slice(name.length + 1));
};
const lines = (out: string) => out.trim().split('\n').filter(Boolean).map((l) => JSON.parse(l) as Record<string, any>);

describe('sip: SIGTERM during calls (SIPp places them)', () => {
  async function sipDuringCalls(drainTimeoutMs: number | undefined, rtpPorts: string) {
    const run = spawnCli(['sip', '--port', '0', '--rtp-ports', rtpPorts, '--max-calls', '10', '--metrics-port', '0', '--json', ...(drainTimeoutMs !== undefined ? ['--drain-timeout', String(drainTimeoutMs)] : [])]);
    const metrics = Number((await run.seen(/metrics on http:\/\/127\.0\.0\.1:(\d+)/))[1]);
    const port = Number((await run.seen(/SIP on 127\.0\.0\.1:(\d+)/))[1]);
    await expect.poll(() => readyz(metrics), { timeout: 10_000 }).toBe(200);
    // Four 4 s calls, all at once.
    const sipp = runSipp('uac-rtp', port, { audio: mulawFile(dir, 4) }, ['-m', '4', '-r', '20', '-l', '4', '-d', '4300'], 60_000);
    await run.until(() => run.count('call') >= 4);
    run.child.kill('SIGTERM');
    await run.seen(/draining: no new calls/);
    const readyAfter = await readyz(metrics);
    // A call that starts after the signal: 503 with Retry-After, no call.
    const peer = await SipPeer.open(port);
    peer.send(peer.build('INVITE', { callId: 'after-the-signal', cseq: 1, body: sdpOffer({ port: 40010 }) }));
    const refused = await peer.response(503);
    peer.close();
    const scraped = await scrape(metrics);
    const code = await run.exit();
    await sipp;
    return { code, readyAfter, refused, scraped, out: lines(run.out()), last: run.err().trim().split('\n').at(-1)! };
  }

  it('readyz 503 at once, a late INVITE answered 503 with Retry-After, /metrics counts it, the calls in flight end done, exit 0', async () => {
    const r = await sipDuringCalls(undefined, '46000-46099');
    expect(r.readyAfter).toBe(503);
    expect(r.refused.headers.get('retry-after')).toBe('5');
    expect(sample(r.scraped, 'svc_stream_sip_invites_total')).toBe(5);
    expect(sample(r.scraped, 'svc_stream_sip_calls_answered_total')).toBe(4);
    expect(sample(r.scraped, 'svc_stream_sip_invites_refused_total{reason="draining"}')).toBe(1);
    expect(sample(r.scraped, 'svc_stream_service_state{state="draining"}')).toBe(1);
    expect(r.out.filter((l) => l['type'] === 'call')).toHaveLength(4);
    const ends = r.out.filter((l) => l['type'] === 'call_end');
    expect(ends.map((e) => [e['status'], e['duration_ms']])).toEqual(Array(4).fill(['done', 4000]));
    expect(r.last).toMatch(/^svc-stream: 4 call\(s\): 4 done, 0 failed, 0 shutdown, 0 rejected; invites 5, answered 4, busy 0, drainRefused 1\b/);
    expect(r.code).toBe(0);
  }, 90_000);

  it('a drain deadline shorter than the calls: BYE, each ends shutdown with its audio so far, exit 1', async () => {
    const r = await sipDuringCalls(300, '46100-46199');
    const ends = r.out.filter((l) => l['type'] === 'call_end');
    expect(ends.map((e) => [e['status'], e['error']?.code])).toEqual(Array(4).fill(['error', 'shutdown']));
    expect(r.out.filter((l) => l['type'] === 'sip_end').map((l) => l['reason'])).toEqual(Array(4).fill('shutdown'));
    expect(r.last).toMatch(/^svc-stream: 4 call\(s\): 0 done, 0 failed, 4 shutdown, 0 rejected/);
    expect(r.code).toBe(1);
  }, 90_000);
});

describe('audiohook: SIGTERM during sessions', () => {
  const key = 'drain-key';
  /** A session streaming both sides in 100 ms messages until `stop()`, then closed the protocol's way. */
  async function session(url: string, id: string) {
    const peer = await connectPeer(url, { sessionId: id, apiKey: key });
    peer.open();
    await peer.next(); // opened
    let streaming = true;
    const frame = interleave(new Uint8Array(800).fill(0x7f), new Uint8Array(800).fill(0xff));
    const sending = (async () => {
      while (streaming && peer.ws.readyState === peer.ws.OPEN) {
        peer.audio(frame);
        await new Promise((r) => setTimeout(r, 100));
      }
    })();
    return {
      peer,
      async close(): Promise<void> {
        streaming = false;
        await sending;
        if (peer.ws.readyState !== peer.ws.OPEN) return;
        peer.send('close', { reason: 'end' });
        await peer.next().catch(() => undefined); // closed
        peer.ws.close();
        await peer.closed;
      },
    };
  }

  async function audioHookDuringSessions(drainTimeoutMs: number | undefined) {
    const run = spawnCli(['audiohook', '--port', '0', '--audiohook-api-key', key, '--max-calls', '4', '--json', ...(drainTimeoutMs !== undefined ? ['--drain-timeout', String(drainTimeoutMs)] : [])]);
    const port = Number((await run.seen(/AudioHook on ws:\/\/[^:]+:(\d+)/))[1]);
    await expect.poll(() => readyz(port), { timeout: 10_000 }).toBe(200);
    const url = `ws://127.0.0.1:${port}/`;
    const sessions = await Promise.all(['11111111-2222-4333-8444-555555555601', '11111111-2222-4333-8444-555555555602'].map((id) => session(url, id)));
    await run.until(() => run.count('call') >= 2);
    await new Promise((r) => setTimeout(r, 500));
    run.child.kill('SIGTERM');
    await run.seen(/draining: no new calls/);
    const readyAfter = await readyz(port);
    // A session that starts after the signal: 503 with Retry-After before the upgrade.
    const refused = await connectPeer(url, { sessionId: '11111111-2222-4333-8444-555555555603', apiKey: key }).then(
      () => undefined,
      (e: { status?: number; headers?: Record<string, string> }) => e,
    );
    const scraped = await scrape(port);
    let disconnects: string[] = [];
    if (drainTimeoutMs === undefined) await Promise.all(sessions.map((s) => s.close()));
    else {
      // The deadline passes while they stream: the server says disconnect.
      await Promise.all(sessions.map((s) => s.peer.closed));
      disconnects = sessions.flatMap((s: { peer: Peer }) => s.peer.received.filter((m) => m.type === 'disconnect').map((m) => String((m.parameters as { reason?: string }).reason)));
      await Promise.all(sessions.map((s) => s.close()));
    }
    const code = await run.exit();
    return { code, readyAfter, refused, scraped, disconnects, out: lines(run.out()), last: run.err().trim().split('\n').at(-1)! };
  }

  it('readyz 503 at once, a late session refused 503 with Retry-After, /metrics counts it, the sessions open end done at their close, exit 0', async () => {
    const r = await audioHookDuringSessions(undefined);
    expect(r.readyAfter).toBe(503);
    expect(r.refused).toMatchObject({ status: 503, headers: { 'retry-after': '5' } });
    expect(sample(r.scraped, 'svc_stream_audiohook_opens_total')).toBe(2);
    expect(sample(r.scraped, 'svc_stream_audiohook_connections_active')).toBe(2);
    expect(sample(r.scraped, 'svc_stream_audiohook_refused_total{reason="draining"}')).toBe(1);
    expect(sample(r.scraped, 'svc_stream_audiohook_refused_total{reason="unauthorized"}')).toBe(0);
    expect(sample(r.scraped, 'svc_stream_service_state{state="draining"}')).toBe(1);
    const ends = r.out.filter((l) => l['type'] === 'call_end');
    expect(ends.map((e) => e['status'])).toEqual(['done', 'done']);
    expect(r.last).toMatch(/^svc-stream: 2 call\(s\): 2 done, 0 failed, 0 shutdown, 0 rejected; connections 2, closed 2, disconnected 0, lost 0, unauthorized 0, overCapacity 0, refusedDraining 1$/);
    expect(r.code).toBe(0);
  }, 60_000);

  it('a drain deadline shorter than the sessions: disconnect, each call ends shutdown, exit 1', async () => {
    const r = await audioHookDuringSessions(300);
    expect(r.disconnects).toEqual(['error', 'error']);
    const ends = r.out.filter((l) => l['type'] === 'call_end');
    expect(ends.map((e) => [e['status'], e['error']?.code])).toEqual([
      ['error', 'shutdown'],
      ['error', 'shutdown'],
    ]);
    expect(r.last).toMatch(/^svc-stream: 2 call\(s\): 0 done, 0 failed, 2 shutdown, 0 rejected; connections 2, closed 0, disconnected 2\b/);
    expect(r.code).toBe(1);
  }, 60_000);
});
