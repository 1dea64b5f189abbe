// Concurrent RTP calls at real-time rate into live sessions on the emulator: the receiving
// process's CPU share, memory per call, the latency it adds to each 20 ms chunk, loss and
// event-loop delay, for 100, 400 and 1,000 calls.
//
//   npx tsx bench/rtp.ts [--calls 100,400,1000] [--seconds 20] [--frame-ms N] [--cpu-prof DIR]
//
// Four processes per call count, so each figure is the receiver's own: the receiver (rtpSource
// → analyzeCalls → conversation sessions), and as its children the emulator (⌈calls/25⌉
// organizations of 25 sessions) and the sender (one shared clock sending every call's PCMU
// packet each 20 ms from samples/call-8k.mulaw). A sweep parent runs one receiver per count.
import dgram from 'node:dgram';
import { readFileSync } from 'node:fs';
import { createRtpSourceStats, rtpSource, type CallLeg } from '../src/telephony/index.js';
import { benchArgs, benchMain, CHUNK, mono, sendLast, type SenderReport } from './telephonyBench.js';

const SCRIPT = new URL(import.meta.url).pathname;
const { chunks: PACKETS } = benchArgs();
const SSRC0 = 0x5000_0000;

/** Child: every call's packets from one shared clock (a 2 ms tick sends what is due), staggered over 20 ms. */
async function senderRole(calls: number, port: number): Promise<void> {
  const mulaw = readFileSync(new URL('../samples/call-8k.mulaw', import.meta.url));
  const socket = dgram.createSocket('udp4');
  const sentAt = Array.from({ length: calls }, () => new Float64Array(PACKETS));
  const next = new Int32Array(calls);
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  const start = mono() + 20;
  let lateTicks = 0;
  let finished = 0;
  let ending = false;
  await new Promise<void>((resolve) => {
    const tick = (): void => {
      const now = mono();
      for (let c = 0; c < calls; c++) {
        let k = next[c]!;
        if (k >= PACKETS) continue;
        // Absolute deadlines: a late tick sends what is due, so each call keeps real time.
        const due = Math.min(PACKETS, Math.floor((now - start - (c * 20) / calls) / 20) + 1);
        if (due - k > 1) lateTicks++;
        const ssrc = SSRC0 + c;
        const seq0 = (c * 977) & 0xffff;
        const offset = (c * CHUNK * 37) % (mulaw.length - PACKETS * CHUNK);
        for (; k < due; k++) {
          const b = Buffer.allocUnsafe(12 + CHUNK);
          b[0] = 0x80;
          b[1] = 0;
          b.writeUInt16BE((seq0 + k) & 0xffff, 2);
          b.writeUInt32BE((k * CHUNK) >>> 0, 4);
          b.writeUInt32BE(ssrc, 8);
          mulaw.copy(b, 12, offset + k * CHUNK, offset + (k + 1) * CHUNK);
          sentAt[c]![k] = mono();
          socket.send(b, port, '127.0.0.1');
        }
        next[c] = k;
        if (k >= PACKETS) {
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
  socket.close();
  sendLast(report);
}

const sourceStats = createRtpSourceStats();
await benchMain<CallLeg>(
  SCRIPT,
  {
    name: 'rtp',
    source: (calls, frameMs, onPort) =>
      rtpSource({
        maxLegs: calls,
        // Long enough that a starved receiver does not end a leg mid-call (it would come back as a new leg).
        idleTimeoutMs: 3000,
        recvBufferSize: 1 << 23,
        stats: sourceStats,
        onListening: (a) => onPort(a.port),
        ...(frameMs !== undefined ? { frameMs } : {}),
      }),
    indexOf: (leg) => leg.ssrc - SSRC0,
    sourceLine: (calls, legs) => {
      const lost = legs.reduce((n, l) => n + l.stats.lost, 0);
      const late = legs.reduce((n, l) => n + l.stats.late, 0);
      return `datagrams received ${sourceStats.datagrams} of ${calls * PACKETS}, jitter-buffer lost ${lost}, late ${late}, legs ${sourceStats.legs}, refused ${sourceStats.refusedLegs}`;
    },
  },
  senderRole,
);
