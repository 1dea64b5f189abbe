// Live RTP calls: the library's receiver (rtpSource → analyzeCalls → a session per call) beside
// the bare path (each datagram's payload copied into its call's frame, one ws.send per full
// frame), the same sender and the same stand-in server, alternating in one run.
//
//   npx tsx bench/rtp.ts [--calls 100,400,1000] [--seconds 20] [--rounds 2] [--workers N]
//                        [--frame-ms 100] [--only bare|library] [--cpu-prof DIR]
//
// The sender is one process: every call's PCMU packet each 20 ms from one shared clock (a 2 ms
// tick sends what is due, absolute deadlines), call c to the receiver's port c mod the ports
// (one port per worker with --workers). See telephonyBench.ts for the processes and figures.
import dgram from 'node:dgram';
import { readFileSync } from 'node:fs';
import WebSocket from 'ws';
import { benchMain, libraryPath, telephony, callUrl, CHUNK, IDLE_MS, keyOf, mono, sendLast, type Listening, type PathContext } from './telephonyBench.js';

const SCRIPT = new URL(import.meta.url).pathname;
const { analyzeCalls, createRtpSourceStats, rtpSource } = await telephony();
const SSRC0 = 0x5000_0000;

/** Child: the RTP sender. */
async function sender(calls: number, ports: readonly number[], seconds: number): Promise<void> {
  const packets = Math.round(seconds * 50);
  const mulaw = readFileSync(new URL('../samples/call-8k.mulaw', import.meta.url));
  const socket = dgram.createSocket({ type: 'udp4', sendBufferSize: 1 << 22 });
  const sentAt = Array.from({ length: calls }, () => new Float64Array(packets));
  const next = new Int32Array(calls);
  const start = mono() + 20;
  let finished = 0;
  let ending = false;
  // Chunks sent more than one 20 ms tick after they were due: the sender (the machine) was behind, not the receiver.
  let lateChunks = 0;
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  await new Promise<void>((resolve) => {
    const tick = (): void => {
      const now = mono();
      for (let c = 0; c < calls; c++) {
        let k = next[c]!;
        if (k >= packets) continue;
        const due = Math.min(packets, Math.floor((now - start - (c * 20) / calls) / 20) + 1);
        const ssrc = SSRC0 + c;
        const seq0 = (c * 977) & 0xffff;
        const offset = (c * CHUNK * 37) % (mulaw.length - packets * CHUNK);
        const port = ports[c % ports.length]!;
        if (due - k > 1) lateChunks += due - k - 1;
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
        if (k >= packets) {
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
  socket.close();
  const u = process.cpuUsage(cpu0);
  sendLast({ type: 'sender-report', sentAt, lateChunks, cpuPct: ((u.user + u.system) / 1000 / (performance.now() - t0)) * 100 });
}

/** The bare path: a datagram's payload into its call's frame, the frame to ws.send when full. */
function bare(ctx: PathContext): Promise<Listening> {
  const F = (8000 * ctx.frameMs) / 1000;
  const socket = dgram.createSocket('udp4');
  const calls = new Map<number, BareCall>();
  const counters = ctx.counters;
  class BareCall {
    readonly ws: WebSocket;
    frame = Buffer.allocUnsafe(F);
    n = 0;
    last = 0;
    waiting: Buffer[] | undefined = [];
    constructor(c: number) {
      counters.legs++;
      this.ws = new WebSocket(callUrl(ctx.standIn, c), { perMessageDeflate: false });
      this.ws.on('open', () => {
        this.ws.send('default');
        for (const f of this.waiting!) this.ws.send(f);
        this.waiting = undefined;
      });
      this.ws.on('message', (data) => {
        if (String(data).startsWith('{"type":"done"')) counters.done++;
      });
      this.ws.on('close', () => ctx.callEnded());
      this.ws.on('error', (err) => {
        counters.failed++;
        counters.failures.push(err.message);
      });
    }
    write(msg: Buffer, start: number): void {
      const len = msg.length - start;
      if (this.n + len > F) this.flush();
      msg.copy(this.frame, this.n, start);
      this.n += len;
      if (this.n === F) this.flush();
    }
    flush(): void {
      if (this.n === 0) return;
      const frame = this.n === F ? this.frame : this.frame.subarray(0, this.n);
      // ws copies the frame as it masks it: the buffer is free again once send returns.
      if (this.waiting) this.waiting.push(Buffer.from(frame));
      else this.ws.send(frame);
      this.n = 0;
    }
    end(): void {
      this.flush();
      if (this.waiting) this.ws.once('open', () => this.ws.send(''));
      else this.ws.send('');
    }
  }
  socket.on('message', (msg) => {
    counters.received++;
    const ssrc = msg.readUInt32BE(8);
    let call = calls.get(ssrc);
    if (!call) calls.set(ssrc, (call = new BareCall(ssrc - SSRC0)));
    call.last = performance.now();
    call.write(msg, 12 + 4 * (msg[0]! & 0x0f));
  });
  // One check for every call: a call quiet for IDLE_MS is over.
  setInterval(() => {
    const now = performance.now();
    for (const call of calls.values()) {
      if (call.last > 0 && now - call.last >= IDLE_MS) {
        call.last = -1;
        call.end();
      }
    }
  }, 250).unref();
  return new Promise((resolve) => {
    socket.bind({ port: 0, address: '127.0.0.1', exclusive: true }, () => {
      socket.setRecvBufferSize(1 << 23);
      resolve({ port: socket.address().port });
    });
  });
}

/** The library: rtpSource → analyzeCalls, a session per leg against the stand-in (one port per worker with --workers). */
function library(ctx: PathContext): Promise<Listening> {
  const stats = createRtpSourceStats();
  return libraryPath(
    ctx,
    'rtpSource',
    (worker, onPort) =>
      analyzeCalls(
        rtpSource({
          ...(worker ? { worker } : { stats }),
          maxLegs: ctx.calls,
          idleTimeoutMs: IDLE_MS,
          recvBufferSize: 1 << 23,
          frameMs: ctx.frameMs,
          onListening: (a) => onPort(a.port),
        }),
        {
          ...(worker ? { worker } : {}),
          baseUrl: ctx.standIn,
          maxConcurrent: ctx.calls,
          whenFull: 'reject',
          sessionOptions: (leg) => ({ apiKey: keyOf(leg.ssrc - SSRC0) }),
        },
      ),
    () => stats.datagrams,
  );
}

await benchMain(SCRIPT, {
  name: 'rtp',
  unit: 'datagrams',
  sharedPort: false,
  sender,
  path: (name, ctx) => (name === 'bare' ? bare(ctx) : library(ctx)),
});
