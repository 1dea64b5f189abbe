// Live Twilio media-stream calls: the library's receiver (mediaStreamServer → analyzeCalls → a
// session per call) beside the bare path (a ws server that parses each message, decodes its
// payload into the call's frame and sends the frame when full), the same sender and the same
// stand-in server, alternating in one run.
//
//   npx tsx bench/mediaStream.ts [--calls 100,400,1000] [--seconds 20] [--rounds 2] [--workers N]
//                                [--frame-ms 100] [--only bare|library] [--cpu-prof DIR]
//
// The sender is one process with one ws client per call speaking Twilio's protocol (connected,
// start, a media message of 160 bytes of base64 μ-law every 20 ms from one shared clock, stop).
// See telephonyBench.ts for the processes and figures.
import { readFileSync } from 'node:fs';
import WebSocket, { WebSocketServer } from 'ws';
import { benchMain, libraryPath, telephony, callUrl, CHUNK, keyOf, mono, sendLast, type Listening, type PathContext } from './telephonyBench.js';

const SCRIPT = new URL(import.meta.url).pathname;
const { analyzeCalls, createMediaStreamServerStats, mediaStreamServer } = await telephony();

const streamSid = (c: number): string => `MZ${c.toString(16).padStart(32, '0')}`;
const callIndex = (sid: string): number => parseInt(sid.slice(2), 16);

/** Child: one Twilio client per call; one shared clock (a 2 ms tick) sends what each call has due. */
async function sender(calls: number, ports: readonly number[], seconds: number): Promise<void> {
  const chunks = Math.round(seconds * 50);
  const mulaw = readFileSync(new URL('../samples/call-8k.mulaw', import.meta.url));
  const sentAt = Array.from({ length: calls }, () => new Float64Array(chunks));
  const next = new Int32Array(calls);
  const startAt = new Float64Array(calls).fill(Infinity);
  const sockets: WebSocket[] = [];
  let finished = 0;
  let ending = false;
  // Chunks sent more than one 20 ms tick after they were due: the sender (the machine) was behind, not the receiver.
  let lateChunks = 0;
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  for (let c = 0; c < calls; c++) {
    const ws = new WebSocket(`ws://127.0.0.1:${ports[c % ports.length]}/media`, { perMessageDeflate: false });
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
        if (k >= chunks) continue;
        const due = Math.min(chunks, Math.floor((now - startAt[c]!) / 20) + 1);
        if (due <= k) continue;
        if (due - k > 1) lateChunks += due - k - 1;
        const ws = sockets[c]!;
        const sid = streamSid(c);
        const offset = (c * CHUNK * 37) % (mulaw.length - chunks * CHUNK);
        for (; k < due; k++) {
          const payload = mulaw.toString('base64', offset + k * CHUNK, offset + (k + 1) * CHUNK);
          sentAt[c]![k] = mono();
          ws.send(`{"event":"media","sequenceNumber":"${k + 2}","media":{"track":"inbound","chunk":"${k + 1}","timestamp":"${k * 20}","payload":"${payload}"},"streamSid":"${sid}"}`);
        }
        next[c] = k;
        if (k >= chunks) {
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
  sendLast({ type: 'sender-report', sentAt, lateChunks, cpuPct: ((u.user + u.system) / 1000 / (performance.now() - t0)) * 100 });
}

/** The bare path: parse each message, decode the payload into the call's frame, send the frame when full. */
function bare(ctx: PathContext): Promise<Listening> {
  const F = (8000 * ctx.frameMs) / 1000;
  const counters = ctx.counters;
  const wss = new WebSocketServer({ host: '127.0.0.1', port: 0, perMessageDeflate: false });
  wss.on('connection', (provider) => {
    let upstream: WebSocket | undefined;
    let waiting: Buffer[] | undefined = [];
    const frame = Buffer.allocUnsafe(F);
    let n = 0;
    const send = (data: Buffer | string): void => {
      if (waiting) waiting.push(typeof data === 'string' ? Buffer.from(data) : Buffer.from(data));
      else upstream!.send(data);
    };
    const flush = (): void => {
      if (n === 0) return;
      // ws copies the frame as it masks it: the buffer is free again once send returns.
      send(n === F ? frame : frame.subarray(0, n));
      n = 0;
    };
    let ended = false;
    const end = (): void => {
      if (ended || !upstream) return;
      ended = true;
      flush();
      if (waiting) upstream.once('open', () => upstream!.send(''));
      else upstream.send('');
    };
    provider.on('message', (data) => {
      counters.received++;
      const msg = JSON.parse(String(data)) as { event: string; start?: { streamSid: string }; media?: { payload: string } };
      if (msg.event === 'media' && upstream) {
        const p = msg.media!.payload;
        const len = (p.length / 4) * 3 - (p.endsWith('==') ? 2 : p.endsWith('=') ? 1 : 0);
        if (n + len > F) flush();
        n += frame.write(p, n, 'base64');
        if (n === F) flush();
      } else if (msg.event === 'start') {
        counters.legs++;
        const up = new WebSocket(callUrl(ctx.standIn, callIndex(msg.start!.streamSid)), { perMessageDeflate: false });
        upstream = up;
        up.on('open', () => {
          up.send('default');
          for (const f of waiting!) up.send(f.byteLength === 0 ? '' : f);
          waiting = undefined;
        });
        up.on('message', (d) => {
          if (String(d).startsWith('{"type":"done"')) counters.done++;
        });
        up.on('close', () => ctx.callEnded());
        up.on('error', (err) => {
          counters.failed++;
          counters.failures.push(err.message);
        });
      } else if (msg.event === 'stop') end();
    });
    provider.on('close', end);
  });
  return new Promise((resolve) => wss.once('listening', () => resolve({ port: (wss.address() as { port: number }).port })));
}

/** The library: mediaStreamServer → analyzeCalls, a session per call against the stand-in (one shared port across workers). */
function library(ctx: PathContext): Promise<Listening> {
  const stats = createMediaStreamServerStats();
  return libraryPath(
    ctx,
    'mediaStreamServer',
    (worker, onPort) =>
      analyzeCalls(
        mediaStreamServer({
          ...(worker ? { worker } : { stats }),
          preset: 'twilio',
          tracks: ['inbound'],
          maxConnections: ctx.calls,
          frameMs: ctx.frameMs,
          onListening: (a) => onPort(a.port),
          onMalformed: (reason) => console.error(`malformed: ${reason}`),
        }),
        {
          ...(worker ? { worker } : {}),
          baseUrl: ctx.standIn,
          maxConcurrent: ctx.calls,
          whenFull: 'reject',
          sessionOptions: (call) => ({ apiKey: keyOf(callIndex(call.streamId)) }),
        },
      ),
    () => stats.messages,
  );
}

await benchMain(SCRIPT, {
  name: 'media-stream',
  unit: 'messages',
  sharedPort: true,
  sender,
  path: (name, ctx) => (name === 'bare' ? bare(ctx) : library(ctx)),
});
