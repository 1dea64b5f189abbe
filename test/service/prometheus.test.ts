// The metrics as an operator reads them: a real Prometheus (Debian's `prometheus`, on loopback,
// with a scrape config written here) scrapes `rtp --workers 2` (on --metrics-port) and
// `media-stream` (on its own port) while calls run through them, an emulator restart in the
// middle making the RTP sessions reconnect; the figures are read back through Prometheus' HTTP
// query API: calls by outcome, packets, reconnects, summed over the workers.
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { startEmulator, type RunningEmulator } from '../../src/emulator/index.js';
import { killSpawned, spawned } from '../cli/spawned.js';
import { freeUdpPorts, rtpCall, spawnCli } from '../cli/rtpTestKit.js';
import { replay, twilioSession } from '../telephony/mediaStreams.js';

const dir = mkdtempSync(join(tmpdir(), 'svc-prometheus-'));
let emu: RunningEmulator | undefined;
afterAll(async () => {
  killSpawned();
  await emu?.close();
  rmSync(dir, { recursive: true, force: true });
});

const freeTcpPort = (): Promise<number> =>
  new Promise((resolve) => {
    const s = createServer();
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });

/** Prometheus scraping `targets` (job name → host:port) every second; resolves with its query. */
async function prometheus(targets: Record<string, string>): Promise<{ child: ChildProcess; query(q: string): Promise<number | undefined> }> {
  const port = await freeTcpPort();
  const config = join(dir, 'prometheus.yml');
  writeFileSync(
    config,
    `global:\n  scrape_interval: 1s\n  scrape_timeout: 900ms\nscrape_configs:\n${Object.entries(targets)
      .map(([job, target]) => `  - job_name: ${job}\n    static_configs:\n      - targets: ['${target}']\n`)
      .join('')}`,
  );
  const child = spawned('prometheus', [`--config.file=${config}`, `--storage.tsdb.path=${join(dir, 'data')}`, `--web.listen-address=127.0.0.1:${port}`, '--log.level=warn'], { stdio: ['ignore', 'ignore', 'pipe'] });
  const base = `http://127.0.0.1:${port}`;
  const query = async (q: string): Promise<number | undefined> => {
    try {
      const r = (await (await fetch(`${base}/api/v1/query?query=${encodeURIComponent(q)}`)).json()) as { data?: { result?: Array<{ value: [number, string] }> } };
      const v = r.data?.result?.[0]?.value[1];
      return v === undefined ? undefined : Number(v);
    } catch {
      return undefined; // not up yet
    }
  };
  await expect.poll(async () => (await fetch(`${base}/-/ready`).then((r) => r.status, () => 0)), { timeout: 30_000, interval: 200 }).toBe(200);
  return { child, query };
}

it('Prometheus scrapes rtp --workers 2 and media-stream: calls by outcome, packets, reconnects, summed over the workers', async () => {
  emu = await startEmulator();
  const env = { SVC_BASE_URL: emu.baseUrl, SVC_API_KEY: emu.apiKey };
  const rtpPort = await freeUdpPorts(2);
  const rtp = spawnCli(['rtp', '--port', String(rtpPort), '--workers', '2', '--max-calls', '10', '--idle-timeout', '400', '--metrics-port', '0', '--json'], env);
  const media = spawnCli(['media-stream', '--port', '0', '--json'], env);
  const metricsPort = Number((await rtp.seen(/metrics on http:\/\/127\.0\.0\.1:(\d+)/))[1]);
  const mediaPort = Number((await media.seen(/media streams on ws:\/\/[\d.]+:(\d+)/))[1]);
  await rtp.until(() => (rtp.err().match(/listening for RTP/g) ?? []).length >= 2);
  const prom = await prometheus({ rtp: `127.0.0.1:${metricsPort}`, 'media-stream': `127.0.0.1:${mediaPort}` });
  await expect.poll(() => prom.query('sum(svc_stream_workers{job="rtp"})'), { timeout: 20_000, message: 'Prometheus scrapes the primary of rtp --workers 2' }).toBe(2);

  // Four RTP calls, two on each worker; the emulator restarts under them (close 1012): each session reconnects and resumes.
  let stop = false;
  const calls = [0, 1, 2, 3].map((i) => rtpCall(rtpPort + (i % 2), 0x4000 + i, () => stop, 20, 10 * i));
  await rtp.until(() => rtp.count('call') >= 4);
  await expect.poll(() => prom.query('sum(svc_stream_calls_active{job="rtp"})'), { timeout: 20_000 }).toBe(4);
  const port = emu.port;
  await emu.shutdown({ graceMs: 100 });
  emu = await startEmulator({ port });
  await rtp.until(() => (rtp.out().match(/"type":"event"/g) ?? []).length > 0);
  stop = true;
  const sent = (await Promise.all(calls)).reduce((a, b) => a + b, 0);
  // Two media-stream calls of 100 chunks each.
  await Promise.all(['MZ1', 'MZ2'].map((sid) => replay(`ws://127.0.0.1:${mediaPort}/`, twilioSession(sid, 2000))));
  await rtp.until(() => rtp.count('call_end') >= 4);
  await media.until(() => media.count('call_end') >= 2);

  const value = (q: string, expected: number) => expect.poll(() => prom.query(q), { timeout: 20_000, interval: 250 }).toBe(expected);
  await value('sum(svc_stream_calls_ended_total{job="rtp",outcome="done"})', 4);
  await value('sum(svc_stream_calls_started_total{job="rtp"})', 4);
  await value('sum(svc_stream_packets_received_total{job="rtp",source="rtp"})', sent);
  await value('sum(svc_stream_rtp_datagrams_total{job="rtp"})', sent);
  await value('sum(svc_stream_calls_ended_total{job="media-stream",outcome="done"})', 2);
  await value('sum(svc_stream_packets_received_total{job="media-stream",source="media-stream"})', 200);
  // Each RTP session reconnected after the restart (at least once), as its own stats count it.
  const reconnects = await prom.query('sum(svc_stream_session_reconnects_total{job="rtp"})');
  expect(reconnects).toBeGreaterThanOrEqual(4);
  // Both workers' process figures are in the sum: two processes' CPU and more.
  expect(await prom.query('count(process_cpu_user_seconds_total{job="rtp"})')).toBe(1);
  rtp.child.kill('SIGTERM');
  media.child.kill('SIGTERM');
  expect(await rtp.exit()).toBe(0);
  expect(await media.exit()).toBe(0);
}, 120_000);

