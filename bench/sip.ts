// SIP calls against the same calls as plain RTP: the receiver's user CPU side by side in one run.
//
//   npx tsx bench/sip.ts [--calls 200] [--rate 10] [--seconds 25] [--rounds 2]
//
// Each round runs both paths, alternating (rtp, sip, rtp, sip …), with a fresh receiver process
// each time, the library built (dist/, `npm run build`):
// - sip: `sipServer → analyzeCalls`; SIPp (Debian's sip-tester) places the calls, `--rate` a
//   second, each `--seconds` long, its rtp_stream sending the call's PCMU (20 ms packets);
// - rtp: `rtpSource → analyzeCalls` on one port; a sender here sends the same packets on the
//   same schedule (call i starts i/rate s in, one SSRC per call).
// Both sessions go to one stand-in service (a thin ws server in this process: counts the audio,
// `done` with its duration), not the emulator, so no analysis shares the cores being measured.
// The receiver reports its own process.cpuUsage() from before it listens until its last call
// ended; the figures are medians over the rounds with the load average beside them.
import { fork, spawn, type ChildProcess } from 'node:child_process';
import dgram from 'node:dgram';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { WebSocketServer } from 'ws';
import { loadavg, mono, telephony } from './telephonyBench.js';

const SCRIPT = new URL(import.meta.url).pathname;
const MULAW = readFileSync(new URL('../samples/call-8k.mulaw', import.meta.url));
const { values } = parseArgs({ options: { calls: { type: 'string' }, rate: { type: 'string' }, seconds: { type: 'string' }, rounds: { type: 'string' }, role: { type: 'string' }, path: { type: 'string' }, base: { type: 'string' }, port: { type: 'string' } } });
const CALLS = Number(values.calls ?? 200);
const RATE = Number(values.rate ?? 10);
const SECONDS = Number(values.seconds ?? 25);
const ROUNDS = Number(values.rounds ?? 2);

interface Report {
  type: 'report';
  userMs: number;
  systemMs: number;
  done: number;
  failed: number;
  lost: number;
  durations: Array<number | null>;
  peakRssMb: number;
}

/** Child: the library's receiver, SIP or RTP, until `calls` calls have ended. */
async function receiver(path: 'sip' | 'rtp', base: string): Promise<void> {
  const { analyzeCalls, rtpSource, sipServer } = await telephony();
  const cpu0 = process.cpuUsage();
  let peakRss = 0;
  const rss = setInterval(() => (peakRss = Math.max(peakRss, process.memoryUsage().rss)), 500);
  const report: Report = { type: 'report', userMs: 0, systemMs: 0, done: 0, failed: 0, lost: 0, durations: [], peakRssMb: 0 };
  const listening = (port: number): void => void process.send!({ type: 'listening', port });
  const source =
    path === 'sip'
      ? sipServer({ port: 0, rtpPorts: { min: 46000, max: 47999 }, maxCalls: CALLS, rtpTimeoutMs: 10_000, onListening: (a) => listening(a.port) })
      : rtpSource({ port: 0, maxLegs: CALLS, idleTimeoutMs: 2000, recvBufferSize: 1 << 22, onListening: (a) => listening(a.port) });
  let ended = 0;
  const finish = (): void => {
    const cpu = process.cpuUsage(cpu0);
    clearInterval(rss);
    sub.unsubscribe();
    Object.assign(report, { userMs: cpu.user / 1000, systemMs: cpu.system / 1000, peakRssMb: Math.round(peakRss / 1e6) });
    process.send!(report, undefined, {}, () => process.exit(0));
  };
  // The sender is done and every call had its time to end: report what ended (a call that never came is missing from `done`).
  process.on('message', (m: { type?: string }) => m?.type === 'finish' && finish());
  const sub = analyzeCalls(source as import('rxjs').Observable<import('../src/telephony/index.js').AnalyzableCall & { stats: unknown }>, { apiKey: 'bench-key', baseUrl: base, config: 'default', maxConcurrent: CALLS, maxQueueMs: Infinity }).subscribe((call) => {
    call.outcome$.subscribe((o) => {
      const s = call.call.stats as { lost?: number; streams?: Record<string, { lost: number }> };
      report.lost += s.lost ?? Object.values(s.streams ?? {}).reduce((n, x) => n + x.lost, 0);
      if (o.status === 'done') report.done++;
      else report.failed++;
      report.durations.push(o.snapshot.aggregates.audioDurationMs);
      if (++ended === CALLS) finish();
    });
  });
}

/** Child: the plain-RTP sender, every call's packet each 20 ms from one clock, call i from i/rate s. */
async function rtpSender(port: number): Promise<void> {
  const packets = SECONDS * 50;
  const socket = dgram.createSocket({ type: 'udp4', sendBufferSize: 1 << 22 });
  const next = new Int32Array(CALLS);
  const start = mono() + 20;
  await new Promise<void>((resolve) => {
    const tick = (): void => {
      const now = mono();
      let finished = 0;
      for (let c = 0; c < CALLS; c++) {
        let k = next[c]!;
        // Call c starts c/rate s in, its packets on a phase of their own within the 20 ms (as
        // calls that start at random times, and as SIPp's per-call streams, arrive): not all in one burst.
        const begins = start + (c * 1000) / RATE + ((c * 7) % 20);
        const due = Math.min(packets, Math.max(0, Math.floor((now - begins) / 20) + 1));
        for (; k < due; k++) {
          const b = Buffer.allocUnsafe(172);
          b[0] = 0x80;
          b[1] = 0;
          b.writeUInt16BE((c * 977 + k) & 0xffff, 2);
          b.writeUInt32BE((k * 160) >>> 0, 4);
          b.writeUInt32BE(0x5000_0000 + c, 8);
          MULAW.copy(b, 12, k * 160, (k + 1) * 160);
          socket.send(b, port, '127.0.0.1');
        }
        next[c] = k;
        if (k >= packets) finished++;
      }
      if (finished === CALLS) return resolve();
      setTimeout(tick, 1);
    };
    tick();
  });
  setTimeout(() => process.exit(0), 200);
}

/** The parent's stand-in: every session accepted, `done` with its audio's duration. */
async function standIn(): Promise<string> {
  const wss = new WebSocketServer({ host: '127.0.0.1', port: 0, perMessageDeflate: false, maxPayload: 1 << 20 });
  await new Promise<void>((r) => wss.once('listening', () => r()));
  wss.on('connection', (ws) => {
    let bytes = 0;
    let config = false;
    ws.on('message', (data, isBinary) => {
      if (isBinary) return void (bytes += (data as Buffer).length);
      if (!config) return void (config = true);
      if ((data as Buffer).length === 0) {
        ws.send(JSON.stringify({ type: 'done', duration_ms: Math.round(bytes / 8) }));
        ws.close(1000);
      }
    });
  });
  return `http://127.0.0.1:${(wss.address() as { port: number }).port}`;
}

function nextMessage<T>(child: ChildProcess, type: string): Promise<T> {
  return new Promise((resolve, reject) => {
    const on = (m: { type?: string }): void => {
      if (m?.type !== type) return;
      child.off('message', on);
      resolve(m as T);
    };
    child.on('message', on);
    child.once('exit', (code) => reject(new Error(`child exited ${code} before ${type}`)));
  });
}

async function round(path: 'sip' | 'rtp', base: string, dir: string): Promise<Report> {
  const rx = fork(SCRIPT, ['--role', 'receiver', '--path', path, '--base', base, '--calls', String(CALLS), '--rate', String(RATE), '--seconds', String(SECONDS)], { execArgv: ['--import', 'tsx'], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  try {
    const { port } = await nextMessage<{ port: number }>(rx, 'listening');
    const reported = nextMessage<Report>(rx, 'report');
    if (path === 'sip') {
      const sipp = spawn('sipp', ['-sf', 'uac-rtp.xml', '-i', '127.0.0.1', '-mi', '127.0.0.1', '-p', '0', '-nostdin', '-trace_err', '-m', String(CALLS), '-r', String(RATE), '-l', String(CALLS), '-d', String(SECONDS * 1000 + 300), `127.0.0.1:${port}`], { cwd: dir, stdio: 'ignore' });
      const code = await new Promise<number | null>((r) => sipp.on('exit', r));
      if (code !== 0) console.error(`  sipp exited ${code}: ${readdirSync(dir).filter((f) => f.endsWith('_errors.log')).map((f) => readFileSync(join(dir, f), 'utf8').slice(0, 600)).join(' ')}`);
    } else {
      const tx = fork(SCRIPT, ['--role', 'sender', '--port', String(port), '--calls', String(CALLS), '--rate', String(RATE), '--seconds', String(SECONDS)], { execArgv: ['--import', 'tsx'], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
      await new Promise((r) => tx.on('exit', r));
    }
    const timer = setTimeout(() => rx.send({ type: 'finish' }), 15_000);
    try {
      return await reported;
    } finally {
      clearTimeout(timer);
    }
  } finally {
    rx.kill('SIGKILL');
  }
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)]!;

async function main(): Promise<void> {
  const base = await standIn();
  const dir = mkdtempSync(join(os.tmpdir(), 'svc-bench-sip-'));
  const scenario = readFileSync(new URL('../test/telephony/fixtures/sip/uac-rtp.xml', import.meta.url), 'utf8').split('[audio]').join(join(dir, 'call.ul'));
  writeFileSync(join(dir, 'uac-rtp.xml'), scenario);
  writeFileSync(join(dir, 'call.ul'), MULAW.subarray(0, SECONDS * 8000));
  console.log(`bench/sip: ${CALLS} calls at ${RATE}/s, ${SECONDS} s each (peak ${Math.min(CALLS, Math.round(RATE * SECONDS))} at once), ${ROUNDS} round(s), ${os.cpus().length} cores, Node ${process.versions.node}`);
  const results: Record<'sip' | 'rtp', Report[]> = { sip: [], rtp: [] };
  for (let r = 0; r < ROUNDS; r++) {
    for (const path of ['rtp', 'sip'] as const) {
      const load = loadavg();
      const rep = await round(path, base, dir);
      results[path].push(rep);
      const wrong = rep.durations.filter((d) => d !== SECONDS * 1000);
      const seen = [...new Set(wrong)].sort((a, b) => (a ?? 0) - (b ?? 0)).slice(0, 6).join(', ');
      console.log(`  round ${r + 1} ${path}: user ${rep.userMs.toFixed(0)} ms, system ${rep.systemMs.toFixed(0)} ms, ${rep.done} done, ${rep.failed} failed, ${rep.lost} lost, ${wrong.length} not ${SECONDS} s${wrong.length ? ` (${seen} ms)` : ''}, peak RSS ${rep.peakRssMb} MB (load ${load})`);
    }
  }
  // A round whose calls did not all end whole (a sender starved on a loaded machine loses packets, and
  // its calls idle out early) measured less work: it is left out of the medians, and said.
  const whole = (x: Report): boolean => x.done === CALLS && x.lost === 0 && x.durations.every((d) => d === SECONDS * 1000);
  const valid = { sip: results.sip.filter(whole), rtp: results.rtp.filter(whole) };
  const left = ROUNDS * 2 - valid.sip.length - valid.rtp.length;
  if (valid.sip.length === 0 || valid.rtp.length === 0) {
    console.log(`no whole round of each path (${left} left out): no figure`);
  } else {
    const sip = median(valid.sip.map((x) => x.userMs));
    const rtp = median(valid.rtp.map((x) => x.userMs));
    console.log(`median user CPU over whole rounds (${left} left out): sip ${sip.toFixed(0)} ms, rtp ${rtp.toFixed(0)} ms, sip/rtp ${(sip / rtp).toFixed(2)}x (load ${loadavg()})`);
  }
  rmSync(dir, { recursive: true, force: true });
  process.exit(0);
}

if (values.role === 'receiver') await receiver(values.path as 'sip' | 'rtp', values.base!);
else if (values.role === 'sender') await rtpSender(Number(values.port));
else await main();
