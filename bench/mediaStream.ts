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
import WebSocket from 'ws';
import { createMediaStreamServerStats, mediaStreamServer, type MediaStreamCall } from '../src/telephony/index.js';
import { benchArgs, benchMain, CHUNK, mono, sendLast, type SenderReport } from './telephonyBench.js';

const SCRIPT = new URL(import.meta.url).pathname;
const { chunks: CHUNKS } = benchArgs();

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

const serverStats = createMediaStreamServerStats();
await benchMain<MediaStreamCall>(
  SCRIPT,
  {
    name: 'media-stream',
    source: (calls, frameMs, onPort) =>
      mediaStreamServer({
        preset: 'twilio',
        tracks: ['inbound'],
        maxConnections: calls,
        stats: serverStats,
        onListening: (a) => onPort(a.port),
        onMalformed: (reason) => console.error(`malformed: ${reason}`),
        ...(frameMs !== undefined ? { frameMs } : {}),
      }),
    indexOf: (call) => callIndex(call.streamId),
    sourceLine: (_calls, received) => {
      const lost = received.reduce((n, c) => n + (c.stats.inbound?.lost ?? 0), 0);
      return `messages ${serverStats.messages}, malformed ${serverStats.malformed}, over capacity ${serverStats.overCapacity}, jitter-buffer lost ${lost}`;
    },
  },
  senderRole,
);
