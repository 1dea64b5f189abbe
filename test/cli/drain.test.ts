// `rtp` as a service under SIGTERM (issue 39, "Drain"): /readyz false at once, a call that starts
// after the signal refused, the calls in flight ending done and exit 0; with a drain deadline
// shorter than the calls, they end `shutdown` and exit 1. One process and two workers, run side
// by side. And --exit-after with a worker killed mid-call keeps the healthy call to its end.
import { afterEach, describe, expect, it } from 'vitest';
import { killSpawned } from './spawned.js';
import { freeUdpPorts, rtpCall, spawnCli } from './rtpTestKit.js';

afterEach(killSpawned);

const readyz = async (port: number): Promise<number> => (await fetch(`http://127.0.0.1:${port}/readyz`)).status;

/** 20 calls into `rtp` (over `workers` processes), SIGTERM mid-call, one call more after it. */
async function drainDuring20Calls(workers: number, drainTimeoutMs?: number) {
  const port = await freeUdpPorts(workers);
  const run = spawnCli([
    'rtp', '--port', String(port), '--workers', String(workers), '--max-calls', '20', '--idle-timeout', '400', '--metrics-port', '0', '--json',
    ...(drainTimeoutMs !== undefined ? ['--drain-timeout', String(drainTimeoutMs)] : []),
  ]);
  const metrics = Number((await run.seen(/metrics on http:\/\/127\.0\.0\.1:(\d+)/))[1]);
  await run.until(() => (run.err().match(/listening for RTP/g) ?? []).length >= workers);
  await expect.poll(() => readyz(metrics), { timeout: 10_000 }).toBe(200);
  let stop = false;
  const calls = Array.from({ length: 20 }, (_, i) => rtpCall(port + (i % workers), 0x9000 + i, () => stop, 20, 100 * i));
  await run.until(() => run.count('call') >= 20);
  run.child.kill('SIGTERM');
  await run.seen(/draining: no new calls/);
  const readyAfter = await readyz(metrics);
  // A call that starts after the signal: its 10 packets are refused.
  await rtpCall(port, 0x9999, 10, 5);
  if (drainTimeoutMs === undefined) stop = true; // the calls end; the drain waits for them
  const code = await run.exit();
  stop = true;
  await Promise.all(calls);
  const ends = run.out().split('\n').filter((l) => l.startsWith('{"type":"call_end"')).map((l) => JSON.parse(l) as { id: string; status: string; error?: { code: string } });
  return { code, readyAfter, ends, last: run.err().trim().split('\n').at(-1)!, calls: run.count('call') };
}

describe('rtp: SIGTERM during 20 calls', () => {
  it('one process and two workers: /readyz 503 at once, the late call refused, the 20 in flight end done, exit 0', async () => {
    const [one, two] = await Promise.all([drainDuring20Calls(1), drainDuring20Calls(2)]);
    for (const r of [one, two]) {
      expect(r.readyAfter).toBe(503);
      expect(r.calls).toBe(20); // the late call never became one
      expect(r.ends.map((e) => e.status)).toEqual(Array(20).fill('done'));
      expect(r.last).toMatch(/^svc-stream: 20 call\(s\): 20 done, 0 failed.*, 0 shutdown, 0 rejected; .*refusedDraining 10\b/);
      expect(r.code).toBe(0);
    }
  }, 90_000);

  it('a drain deadline shorter than the calls: they end shutdown, exit 1', async () => {
    const [one, two] = await Promise.all([drainDuring20Calls(1, 300), drainDuring20Calls(2, 300)]);
    for (const r of [one, two]) {
      expect(r.readyAfter).toBe(503);
      expect(r.ends.map((e) => e.error?.code)).toEqual(Array(20).fill('shutdown'));
      expect(r.last).toMatch(/^svc-stream: 20 call\(s\): 0 done, 0 failed.*, 20 shutdown, 0 rejected/);
      expect(r.code).toBe(1);
    }
  }, 90_000);
});

describe('rtp --workers 2 --exit-after 2 with a worker killed mid-call', () => {
  it('keeps the healthy call to its done, and exits 1 with the calls counted by outcome', async () => {
    const port = await freeUdpPorts(2);
    const run = spawnCli(['rtp', '--port', String(port), '--workers', '2', '--exit-after', '2', '--idle-timeout', '1000', '--json']);
    const pid1 = Number((await run.seen(/worker 1 started \(pid (\d+)\)/))[1]);
    await run.until(() => (run.err().match(/listening for RTP/g) ?? []).length >= 2);
    // One call on each worker's port; worker 1 dies after both started. Its call goes on on the
    // restarted worker and ends first: the second call ended, while the healthy one still runs.
    const healthy = rtpCall(port, 0x51, 250, 20);
    const other = rtpCall(port + 1, 0x52, 100, 20);
    await run.until(() => run.count('call') >= 2);
    process.kill(pid1, 'SIGKILL');
    await Promise.all([healthy, other]);
    expect(await run.exit()).toBe(1);
    const lines = run.out().split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as { type: string; id: string; status?: string; event?: { type: string }; error?: { code: string } });
    const healthyLines = lines.filter((l) => l.id === 'rtp-00000051');
    expect(healthyLines.some((l) => l.type === 'event' && l.event?.type === 'done')).toBe(true);
    expect(healthyLines.find((l) => l.type === 'call_end')).toMatchObject({ status: 'done' });
    expect(lines.filter((l) => l.type === 'call_end' && l.id === 'rtp-00000052').map((l) => l.error?.code ?? l.status)).toContain('worker_exited');
    expect(run.err().trim().split('\n').at(-1)).toMatch(/^svc-stream: [23] call\(s\): [12] done, 1 failed \(1 lost with a worker\), 0 shutdown, 0 rejected; 1 worker restart\(s\)/);
  }, 60_000);
});
