// Concurrent Twilio media-stream calls at real-time rate into live sessions on the emulator:
// the receiving process's CPU share, memory per call, the latency it adds to each 20 ms chunk,
// loss and event-loop delay, for 100, 400 and 1,000 calls.
//
//   npx tsx bench/mediaStream.ts [--calls 100,400,1000] [--seconds 20] [--frame-ms N] [--cpu-prof DIR]
//
// Four processes per call count, so each figure is the receiver's own: the receiver
// (mediaStreamServer → analyzeCalls → conversation sessions), and as its children the emulator
// (⌈calls/25⌉ organizations of 25 sessions) and the sender (one ws client per call speaking
// Twilio's protocol: connected, start, a media message with 160 bytes of base64 μ-law every
// 20 ms from one shared clock, stop). A sweep parent runs one receiver per count.
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import WebSocket from 'ws';
import { createMediaStreamServerStats, mediaStreamServer } from '../src/telephony/index.js';
import {
  armWindow,
  CHUNK,
  ChunkClock,
  emulatorRole,
  forkRole,
  formatResult,
  loadavg,
  mono,
  nextMessage,
  retainedNow,
  sendLast,
  SteadyWindow,
  runCalls,
  sweep,
  type EmulatorReport,
  type SenderReport,
} from './telephonyBench.js';

const { values } = parseArgs({
  options: {
    calls: { type: 'string' },
    seconds: { type: 'string' },
    role: { type: 'string' },
    port: { type: 'string' },
    'frame-ms': { type: 'string' },
    'cpu-prof': { type: 'string' },
  },
});
const SCRIPT = new URL(import.meta.url).pathname;
const SECONDS = Number(values.seconds ?? 20);
const CHUNKS = SECONDS * 50;

const streamSid = (c: number): string => `MZ${c.toString(16).padStart(32, '0')}`;
const callIndex = (sid: string): number => parseInt(sid.slice(2), 16);

/** Child: one Twilio client per call; one shared clock (a 2 ms tick) sends what each call has due. */
async function senderRole(calls: number, port: number): Promise<void> {
  const mulaw = readFileSync(new URL('../samples/call-8k.mulaw', import.meta.url));
  const sentAt = Array.from({ length: calls }, () => new Float64Array(CHUNKS));
  const next = new Int32Array(calls);
  const startAt = new Float64Array(calls).fill(Infinity);
  const sockets: WebSocket[] = [];
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  let lateTicks = 0;
  let finished = 0;
  let ending = false;
  for (let c = 0; c < calls; c++) {
    const ws = new WebSocket(`ws://127.0.0.1:${port}/media`, { perMessageDeflate: false });
    sockets.push(ws);
    ws.on('error', (err) => console.error(`sender call ${c}: ${err.message}`));
    ws.on('open', () => {
      const sid = streamSid(c);
      ws.send(JSON.stringify({ event: 'connected', protocol: 'Call', version: '1.0.0' }));
      ws.send(
        JSON.stringify({
          event: 'start',
          sequenceNumber: '1',
          start: { accountSid: 'ACbench', streamSid: sid, callSid: `CA${c}`, tracks: ['inbound'], mediaFormat: { encoding: 'audio/x-mulaw', sampleRate: 8000, channels: 1 }, customParameters: {} },
          streamSid: sid,
        }),
      );
      startAt[c] = mono();
    });
  }
  await new Promise<void>((resolve) => {
    const tick = (): void => {
      const now = mono();
      for (let c = 0; c < calls; c++) {
        let k = next[c]!;
        if (k >= CHUNKS) continue;
        const due = Math.min(CHUNKS, Math.floor((now - startAt[c]!) / 20) + 1);
        if (due <= k) continue;
        if (due - k > 1) lateTicks++;
        const ws = sockets[c]!;
        const sid = streamSid(c);
        const offset = (c * CHUNK * 37) % (mulaw.length - CHUNKS * CHUNK);
        for (; k < due; k++) {
          const payload = mulaw.toString('base64', offset + k * CHUNK, offset + (k + 1) * CHUNK);
          sentAt[c]![k] = mono();
          ws.send(`{"event":"media","sequenceNumber":"${k + 2}","media":{"track":"inbound","chunk":"${k + 1}","timestamp":"${k * 20}","payload":"${payload}"},"streamSid":"${sid}"}`);
        }
        next[c] = k;
        if (k >= CHUNKS) {
          ws.send(JSON.stringify({ event: 'stop', sequenceNumber: String(k + 2), stop: { accountSid: 'ACbench', callSid: `CA${c}` }, streamSid: sid }));
          ws.close(1000);
          finished++;
          if (!ending) {
            ending = true;
            process.send!({ type: 'ending' });
          }
        }
      }
      if (finished === calls) {
        clearInterval(timer);
        resolve();
      }
    };
    const timer = setInterval(tick, 2);
    process.send!({ type: 'started' });
  });
  const u = process.cpuUsage(cpu0);
  const report: SenderReport = { type: 'sender-report', cpuPct: ((u.user + u.system) / 1000 / (performance.now() - t0)) * 100, lateTicks, sentAt };
  sendLast(report);
}

async function receiverRole(calls: number): Promise<void> {
  const loadBefore = loadavg();
  const emu = forkRole(SCRIPT, ['--role', 'emulator', '--calls', String(calls)]);
  const { baseUrl } = await nextMessage<{ type: 'emulator-ready'; baseUrl: string }>(emu, 'emulator-ready');

  const clock = new ChunkClock(calls, CHUNKS);
  const window = new SteadyWindow();
  const serverStats = createMediaStreamServerStats();
  let resolvePort!: (p: number) => void;
  const portP = new Promise<number>((r) => (resolvePort = r));
  const frameMs = values['frame-ms'] !== undefined ? Number(values['frame-ms']) : undefined;
  const calls$ = mediaStreamServer({
    preset: 'twilio',
    tracks: ['inbound'],
    maxConnections: calls,
    stats: serverStats,
    onListening: (a) => resolvePort(a.port),
    onMalformed: (reason) => console.error(`malformed: ${reason}`),
    ...(frameMs !== undefined ? { frameMs } : {}),
  });
  const run = runCalls(calls$, calls, baseUrl, (call) => callIndex(call.streamId), clock);
  const port = await portP;
  const retainedBase = retainedNow();
  const rssBase = process.memoryUsage.rss();
  const sender = forkRole(SCRIPT, ['--role', 'sender', '--port', String(port), '--calls', String(calls), '--seconds', String(SECONDS)]);
  // The fallback counts from the sender's first tick, not its start (a loaded machine takes seconds to start it).
  void nextMessage(sender, 'started').then(() => armWindow(clock, window, Math.min(8000, (SECONDS * 1000) / 2)), () => undefined);
  const senderReport = nextMessage<SenderReport>(sender, 'sender-report');
  await nextMessage(sender, 'ending');
  window.stop();
  const sent = await senderReport;
  await run.all;
  emu.send({ type: 'stop' });
  const emuReport = await nextMessage<EmulatorReport>(emu, 'emulator-report');
  if (!window.result) throw new Error('no window: the first call ended before the window started');

  const lost = run.received.reduce((n, c) => n + (c.stats.inbound?.lost ?? 0), 0);
  console.log(
    formatResult(`media-stream${frameMs !== undefined ? ` (frameMs ${frameMs})` : ''}`, {
      calls,
      done: run.done,
      failures: run.failures,
      window: window.result,
      rssBase,
      retainedBase,
      latency: clock.latencies(sent.sentAt, window.result),
      emulator: emuReport,
      sender: sent,
      bytesSent: calls * CHUNKS * CHUNK,
      sourceLine: `messages ${serverStats.messages}, malformed ${serverStats.malformed}, over capacity ${serverStats.overCapacity}, jitter-buffer lost ${lost}`,
      loadBefore,
      openAtStart: window.openAtStart,
    }),
  );
  process.exit(run.done === calls ? 0 : 1);
}

const counts = (values.calls ?? '100,400,1000').split(',').map(Number);
if (values.role === 'emulator') await emulatorRole(counts[0]!);
else if (values.role === 'sender') await senderRole(counts[0]!, Number(values.port));
else if (values.role === 'receiver') await receiverRole(counts[0]!);
else {
  const pass = ['--seconds', String(SECONDS), ...(values['frame-ms'] !== undefined ? ['--frame-ms', values['frame-ms']] : [])];
  const prof = values['cpu-prof'] !== undefined ? ['--cpu-prof', '--cpu-prof-dir', values['cpu-prof']] : [];
  process.exit(await sweep(SCRIPT, 'media-stream', counts, pass, prof));
}
