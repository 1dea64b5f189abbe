// Issue 40, "a worker's figures survive it": a worker SIGKILLed during 20 RTP calls, and the
// totals still add up to what was sent: the datagrams every worker counted (the dead one's up to
// its last report) plus the packets lost with it, told by the sequence numbers of the calls that
// went on on the restarted worker. What the kernel drops for a full socket buffer (under load)
// no process sees: the kernel counts it, machine-wide.
//
// Retried for now: one fresh-clone CI run at load ~4 (2026-11-27) found 41 packets of 30 calls
// counted nowhere with the kernel dropping none. The cause found by reading: a leg's mark was
// sent ahead of the counters of the datagrams it held while it waited for its place, so a worker
// killed before its next report left them in neither figure; markCall now sends the counters
// first. The retry goes once this has held over many loaded runs.
import { afterEach, expect, it } from 'vitest';
import { killSpawned } from '../cli/spawned.js';
import { freeUdpPorts, rtpCall, spawnCli, udpReceiveBufferErrors } from '../cli/rtpTestKit.js';

afterEach(killSpawned);

it('a worker SIGKILLed mid-call during 20 RTP calls: datagrams counted + packets lost with the worker = packets sent (less what the kernel dropped)', async () => {
  const port = await freeUdpPorts(2);
  const run = spawnCli(['rtp', '--port', String(port), '--workers', '2', '--max-calls', '20', '--idle-timeout', '1500', '--json']);
  const pid1 = Number((await run.seen(/worker 1 started \(pid (\d+)\)/))[1]);
  await run.seen(/listening for RTP on [\d.]+:\d+[\s\S]*listening for RTP on [\d.]+:\d+/);
  const dropsBefore = udpReceiveBufferErrors();
  // Ten calls on each worker's port (worker i listens on --port + i); they go on until told.
  let stop = false;
  const calls = Array.from({ length: 20 }, (_, i) => rtpCall(port + (i % 2), 0x7000 + i, () => stop, 20, 1000 + 37 * i));
  await run.until(() => run.count('call') >= 20);
  // Worker 1 dies mid-call; its calls go on sending to its port, and on the restarted worker as new legs.
  process.kill(pid1, 'SIGKILL');
  await run.seen(/worker 1 restarted/);
  await run.until(() => run.count('call') >= 30);
  stop = true;
  const sent = (await Promise.all(calls)).reduce((a, b) => a + b, 0);
  // Every call ends (the ten lost with the worker, the others idling out), then a drain ends the command.
  await run.until(() => run.count('call_end') >= 30);
  run.child.kill('SIGTERM');
  expect(await run.exit()).toBe(1); // ten calls were lost with the worker
  const dropped = udpReceiveBufferErrors() - dropsBefore;
  const last = run.err().trim().split('\n').at(-1)!;
  expect(last).toMatch(/^svc-stream: 30 call\(s\): 20 done, 10 failed \(10 lost with a worker\)/);
  const lostPackets = Number(/\((\d+) packets lost with the workers\)/.exec(last)?.[1] ?? 0);
  const datagrams = Number(/datagrams (\d+)/.exec(last)![1]);
  expect(lostPackets).toBeGreaterThan(0);
  // Received by the live worker + by the dead one up to its last report + by the restarted one,
  // and lost with the dead one: all that was sent, but for what the kernel dropped (0 on a quiet machine).
  expect(datagrams + lostPackets, `${last}; the kernel dropped ${dropped}`).toBeLessThanOrEqual(sent);
  expect(sent - (datagrams + lostPackets), `${last}; the kernel dropped ${dropped}`).toBeLessThanOrEqual(dropped);
}, { timeout: 60_000, retry: 2 });
