// 100 concurrent RTP calls at real-time rate into live sessions on the emulator: the CPU the
// receiving process uses and the latency it adds from a datagram's arrival to its WebSocket send.
//
//   npx tsx bench/rtp.ts [--calls 100] [--seconds 12]
//
// Three processes, so the figure is the receiver's own: the emulator (4 organizations × 25
// sessions) and the sender (one 20 ms timer per call, PCMU from samples/call-8k.mulaw) run as
// children of this one, which runs rtpSource → analyzeCalls → conversation sessions.
import { spawn, type ChildProcess } from 'node:child_process';
import dgram from 'node:dgram';
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import WebSocket, { type ClientOptions } from 'ws';
import { startEmulator } from '../src/emulator/index.js';
import { analyzeCalls, createAnalyzeCallsStats, createRtpSourceStats, rtpSource, type CallLeg } from '../src/telephony/index.js';
import { fmt, machine, percentile } from './benchInternals.js';

const ORGS = 4;
const PER_ORG = 25;
const { values } = parseArgs({ options: { calls: { type: 'string' }, seconds: { type: 'string' }, role: { type: 'string' }, port: { type: 'string' } } });
const CALLS = Number(values.calls ?? 100);
const SECONDS = Number(values.seconds ?? 12);

/** Child: the emulator, printing its base URL, then its CPU when told to stop. */
async function emulatorRole(): Promise<void> {
  const emu = await startEmulator({ organizations: Array.from({ length: ORGS }, (_, i) => ({ id: `org${i}`, keys: [`bench-${i}`], concurrency: PER_ORG })) });
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  console.log(JSON.stringify({ baseUrl: emu.baseUrl }));
  process.stdin.once('data', async () => {
    const u = process.cpuUsage(cpu0);
    const peaks = emu.accounts.organizations.map((o) => o.peakInFlight.conversation);
    console.log(JSON.stringify({ cpuPct: ((u.user + u.system) / 1000 / (performance.now() - t0)) * 100, peaks }));
    await emu.close();
    process.exit(0);
  });
}

/** Child: CALLS senders, each a 20 ms interval timer sending one PCMU packet, staggered over 20 ms. */
async function senderRole(port: number): Promise<void> {
  const mulaw = readFileSync(new URL('../samples/call-8k.mulaw', import.meta.url));
  const socket = dgram.createSocket('udp4');
  const packets = SECONDS * 50;
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  let lateTicks = 0;
  await Promise.all(
    Array.from({ length: CALLS }, (_, c) =>
      new Promise<void>((resolve) => {
        const ssrc = 0x5000_0000 + c;
        const seq0 = (c * 977) & 0xffff;
        const offset = (c * 160 * 37) % (mulaw.length - packets * 160);
        setTimeout(() => {
          const start = performance.now();
          let k = 0;
          const tick = (): void => {
            // Absolute deadlines: a late timer sends what is due, so the call keeps real time.
            const due = Math.min(packets, Math.floor((performance.now() - start) / 20) + 1);
            if (due - k > 1) lateTicks++;
            for (; k < due; k++) {
              const b = Buffer.allocUnsafe(172);
              b[0] = 0x80;
              b[1] = 0;
              b.writeUInt16BE((seq0 + k) & 0xffff, 2);
              b.writeUInt32BE((k * 160) >>> 0, 4);
              b.writeUInt32BE(ssrc, 8);
              mulaw.copy(b, 12, offset + k * 160, offset + (k + 1) * 160);
              socket.send(b, port, '127.0.0.1');
            }
            if (k >= packets) {
              clearInterval(timer);
              resolve();
            }
          };
          const timer = setInterval(tick, 20);
          tick();
        }, (c * 20) / CALLS);
      }),
    ),
  );
  const u = process.cpuUsage(cpu0);
  console.log(JSON.stringify({ cpuPct: ((u.user + u.system) / 1000 / (performance.now() - t0)) * 100, lateTicks }));
  setTimeout(() => socket.close(), 100);
}

function child(args: string[]): { proc: ChildProcess; lines: AsyncIterator<string> } {
  const proc = spawn(process.execPath, ['--import', 'tsx', new URL(import.meta.url).pathname, ...args], { stdio: ['pipe', 'pipe', 'inherit'] });
  const queue: string[] = [];
  const waiters: Array<(s: string) => void> = [];
  let buf = '';
  proc.stdout!.on('data', (d: Buffer) => {
    buf += d.toString();
    let i: number;
    while ((i = buf.indexOf('\n')) >= 0) {
      const line = buf.slice(0, i);
      buf = buf.slice(i + 1);
      const w = waiters.shift();
      if (w) w(line);
      else queue.push(line);
    }
  });
  const lines: AsyncIterator<string> = { next: () => new Promise((r) => (queue.length ? r({ value: queue.shift()!, done: false }) : waiters.push((s) => r({ value: s, done: false })))) };
  return { proc, lines };
}

async function receiver(): Promise<void> {
  console.log(`bench/rtp: ${CALLS} RTP calls × ${SECONDS} s of PCMU at real time, ${machine()}`);
  const emu = child(['--role', 'emulator']);
  const { baseUrl } = JSON.parse((await emu.lines.next()).value as string) as { baseUrl: string };

  // Arrival time of every datagram, per SSRC, in order; each chunk a session sends pops one.
  const arrivals = new Map<number, number[]>();
  const added: number[] = [];
  const flushed: number[] = [];
  let warmup = 0;
  const sourceStats = createRtpSourceStats();
  const callStats = createAnalyzeCallsStats();
  let resolvePort!: (p: number) => void;
  const portP = new Promise<number>((r) => (resolvePort = r));
  const legs$ = rtpSource({
    idleTimeoutMs: 1000,
    recvBufferSize: 1 << 23,
    stats: sourceStats,
    onListening: (a) => resolvePort(a.port),
    onDatagram: (_b, ssrc) => {
      if (ssrc === undefined) return;
      let q = arrivals.get(ssrc);
      if (!q) arrivals.set(ssrc, (q = []));
      q.push(performance.now());
    },
  });
  const factoryFor = (leg: CallLeg) => (url: string, options: ClientOptions): WebSocket => {
    const ws = new WebSocket(url, options);
    let openedAt = Infinity;
    ws.once('open', () => (openedAt = performance.now()));
    const q = () => arrivals.get(leg.ssrc) ?? [];
    let head = 0;
    const send = ws.send.bind(ws) as (data: unknown, opts?: unknown, cb?: (err?: Error) => void) => void;
    (ws as unknown as { send: typeof send }).send = (data, opts, cb) => {
      if (typeof data === 'string' || typeof opts === 'function') return send(data, opts, cb);
      const arrived = q()[head++];
      const now = performance.now();
      // Chunks that arrived before the socket was open measure the handshake, not the pipeline.
      const inWarmup = arrived !== undefined && arrived < openedAt;
      if (inWarmup) warmup++;
      else if (arrived !== undefined) added.push(now - arrived);
      return send(data, opts, (err?: Error) => {
        if (arrived !== undefined && !inWarmup) flushed.push(performance.now() - arrived);
        cb?.(err);
      });
    };
    return ws;
  };

  const outcomes: string[] = [];
  const all = new Promise<void>((resolve) => {
    analyzeCalls(legs$, {
      baseUrl,
      maxConcurrent: ORGS * PER_ORG,
      whenFull: 'queue',
      callStats,
      sessionOptions: (leg, i) => ({ apiKey: `bench-${i % ORGS}`, webSocketFactory: factoryFor(leg) }),
    }).subscribe((call) =>
      call.outcome$.subscribe((o) => {
        outcomes.push(o.status === 'done' ? 'done' : `${o.status}: ${String(o.error)}`);
        if (outcomes.length === CALLS) resolve();
      }),
    );
  });
  const port = await portP;
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  const sender = child(['--role', 'sender', '--port', String(port), '--calls', String(CALLS), '--seconds', String(SECONDS)]);
  const senderReport = JSON.parse((await sender.lines.next()).value as string) as { cpuPct: number; lateTicks: number };
  const tSent = performance.now();
  await all;
  const wall = performance.now() - t0;
  const u = process.cpuUsage(cpu0);
  emu.proc.stdin!.write('stop\n');
  const emuReport = JSON.parse((await emu.lines.next()).value as string) as { cpuPct: number; peaks: number[] };

  added.sort((a, b) => a - b);
  flushed.sort((a, b) => a - b);
  const done = outcomes.filter((o) => o === 'done').length;
  console.log(`calls done: ${done}/${CALLS}${done < CALLS ? ` (${outcomes.filter((o) => o !== 'done').slice(0, 3).join('; ')})` : ''}; emulator peak sessions per org: ${emuReport.peaks.join(', ')}`);
  console.log(`datagrams ${sourceStats.datagrams}, legs ${sourceStats.legs}, malformed ${sourceStats.malformed}; wall ${fmt(wall / 1000, 2)} s (sending ${fmt((tSent - t0) / 1000, 2)} s)`);
  console.log(`receiver CPU (rtpSource + jitter buffers + ${CALLS} sessions): ${fmt(((u.user + u.system) / 1000 / wall) * 100)} % of one core (user ${fmt(u.user / 1000 / wall * 100)} %, system ${fmt(u.system / 1000 / wall * 100)} %)`);
  console.log(`  emulator child: ${fmt(emuReport.cpuPct)} %, sender child: ${fmt(senderReport.cpuPct)} % (late ticks ${senderReport.lateTicks})`);
  console.log(`added latency, UDP 'message' → ws.send (${added.length} chunks; ${warmup} that arrived before their session's socket was open left out): p50 ${fmt(percentile(added, 50), 3)} ms, p99 ${fmt(percentile(added, 99), 3)} ms, max ${fmt(added.at(-1) ?? NaN, 2)} ms`);
  console.log(`  → flushed to the socket (ws.send callback): p50 ${fmt(percentile(flushed, 50), 3)} ms, p99 ${fmt(percentile(flushed, 99), 3)} ms`);
  process.exit(done === CALLS ? 0 : 1);
}

if (values.role === 'emulator') await emulatorRole();
else if (values.role === 'sender') await senderRole(Number(values.port));
else await receiver();
