// Reconnect with resume, measured on loopback:
// 1. Time from a drop (the server destroys the TCP connection, no close frame) to audio
//    flowing again (the first binary frame on the new connection), p50/p99, with the default
//    backoff and with no backoff (the mechanism's own cost). Drops are 2.5 s apart, so each new
//    session has sent a clip (the attempt count starts again) before the next drop.
// 2. The cost of the replay buffer per live call: CALLS live calls (20 ms frames of 16 kHz s16le
//    every 20 ms) for SECONDS each, reconnect on (the default) vs off, CPU (user + system) and
//    memory (heap + array buffers) of the process; the server sends a clip every 2 s of audio
//    (the commit point advances) or none (the buffer holds `replayMs`).
// Run: npx tsx bench/reconnect.ts   (RECONNECT_DROPS=n, RECONNECT_CALLS=n, RECONNECT_SECONDS=n)
import { performance } from 'node:perf_hooks';
import { Observable, type Subscription } from 'rxjs';
import { WebSocketServer, type WebSocket } from 'ws';
import { analyzeConversation } from '../src/session/conversation.js';
import { createSessionStats, type SessionStats } from '../src/session/stats.js';
import { fmt, KEY, machine, percentile, RAW } from './benchInternals.js';

const DROPS = Number(process.env['RECONNECT_DROPS'] ?? 30);
const CALLS = Number(process.env['RECONNECT_CALLS'] ?? 50);
const SECONDS = Number(process.env['RECONNECT_SECONDS'] ?? 20);
const FRAME = 640; // 20 ms of 16 kHz s16le
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface Server {
  readonly baseUrl: string;
  /** Destroy every open connection (no close frame) and note when. */
  drop(): number;
  /** Resolves with the time the next binary frame arrives on a connection opened after `since`. */
  nextAudioAfter(since: number): Promise<number>;
  close(): Promise<void>;
}

/** A minimal streaming server: takes the config and audio, sends a `clip` every `clipEveryMs` of audio (0: none). */
async function startServer(clipEveryMs: number): Promise<Server> {
  const wss = new WebSocketServer({ host: '127.0.0.1', port: 0, perMessageDeflate: false });
  await new Promise<void>((r) => wss.once('listening', () => r()));
  const opened = new Map<WebSocket, number>();
  let waiter: { since: number; resolve: (t: number) => void } | undefined;
  wss.on('connection', (ws) => {
    opened.set(ws, performance.now());
    let bytes = 0;
    let clips = 0;
    ws.on('message', (data, isBinary) => {
      if (!isBinary) {
        if ((data as Buffer).length === 0) {
          ws.send(JSON.stringify({ type: 'done', duration_ms: Math.round(bytes / 32) }));
          ws.close(1000);
        }
        return;
      }
      bytes += (data as Buffer).length;
      const now = performance.now();
      if (waiter && opened.get(ws)! > waiter.since) {
        waiter.resolve(now);
        waiter = undefined;
      }
      if (clipEveryMs > 0 && bytes / 32 >= (clips + 1) * clipEveryMs) {
        const start = clips * clipEveryMs;
        clips++;
        ws.send(JSON.stringify({ type: 'clip', clip: { clip_uuid: `c-${start}-${Math.random()}`, text: '', start_ms: start, duration_ms: clipEveryMs - 400, speaker_label: '1' } }));
      }
    });
    ws.on('close', () => opened.delete(ws));
    ws.on('error', () => undefined);
  });
  const port = (wss.address() as { port: number }).port;
  return {
    baseUrl: `http://127.0.0.1:${port}`,
    drop() {
      const t = performance.now();
      for (const ws of opened.keys()) ws.terminate();
      return t;
    },
    nextAudioAfter: (since) => new Promise((resolve) => (waiter = { since, resolve })),
    close: () =>
      new Promise<void>((r) => {
        for (const ws of wss.clients) ws.terminate();
        wss.close(() => r());
      }),
  };
}

/** A live call: a 20 ms frame every 20 ms until unsubscribed (or `ms` of audio). */
function liveCall(ms = Infinity): Observable<Uint8Array> {
  return new Observable<Uint8Array>((s) => {
    const frame = new Uint8Array(FRAME).fill(1);
    let sent = 0;
    const t = setInterval(() => {
      s.next(frame);
      sent += 20;
      if (sent >= ms) {
        clearInterval(t);
        s.complete();
      }
    }, 20);
    return () => clearInterval(t);
  });
}

async function dropToFlowing(label: string, reconnect: object): Promise<void> {
  const server = await startServer(2_000);
  const stats = createSessionStats();
  const sub = liveCall()
    .pipe(analyzeConversation({ apiKey: KEY, baseUrl: server.baseUrl, format: RAW, stats, reconnect: { maxAttempts: 100, ...reconnect } }))
    .subscribe({ error: (err: unknown) => console.error(`${label}: failed`, err) });
  await sleep(500);
  const gaps: number[] = [];
  for (let i = 0; i < DROPS; i++) {
    const flowing = server.nextAudioAfter(performance.now());
    const at = server.drop();
    gaps.push((await flowing) - at);
    // Long enough for the new session to send a clip: attempts count in a row without an
    // event from the server, so back-to-back drops without one would back off further.
    await sleep(2_500);
  }
  sub.unsubscribe();
  await server.close();
  gaps.sort((a, b) => a - b);
  console.log(
    `| ${label} | ${DROPS} | ${fmt(percentile(gaps, 50), 1)} ms | ${fmt(percentile(gaps, 99), 1)} ms | ${stats.reconnects} | ${fmt(stats.reconnectingMs / Math.max(1, stats.reconnects), 1)} ms | ${fmt(stats.bytesReplayed / Math.max(1, stats.reconnects) / 32, 0)} ms |`,
  );
}

async function costPerCall(label: string, reconnect: false | undefined, clipEveryMs: number): Promise<void> {
  const server = await startServer(clipEveryMs);
  global.gc?.();
  await sleep(200);
  const mem0 = process.memoryUsage();
  const cpu0 = process.cpuUsage();
  const subs: Subscription[] = [];
  const all: SessionStats[] = [];
  const ended: Promise<void>[] = [];
  for (let i = 0; i < CALLS; i++) {
    const stats = createSessionStats();
    all.push(stats);
    ended.push(
      new Promise((resolve) =>
        subs.push(
          liveCall(SECONDS * 1000)
            .pipe(analyzeConversation({ apiKey: KEY, baseUrl: server.baseUrl, format: RAW, stats, ...(reconnect === false ? { reconnect: false } : {}) }))
            .subscribe({ error: () => resolve(), complete: () => resolve() }),
        ),
      ),
    );
  }
  // Memory near the end, while every call still holds what it holds.
  await sleep(SECONDS * 1000 - 500);
  global.gc?.();
  const mem1 = process.memoryUsage();
  await Promise.all(ended);
  const cpu = process.cpuUsage(cpu0);
  for (const s of subs) s.unsubscribe();
  await server.close();
  const heldPerCall = (mem1.heapUsed + mem1.arrayBuffers - (mem0.heapUsed + mem0.arrayBuffers)) / CALLS;
  const cpuPerCallSecond = (cpu.user + cpu.system) / 1000 / CALLS / SECONDS;
  const done = all.filter((s) => s.status === 'done').length;
  console.log(`| ${label} | ${CALLS} × ${SECONDS} s | ${fmt(cpuPerCallSecond, 2)} ms | ${fmt(heldPerCall / 1024, 0)} KiB | ${done}/${CALLS} done |`);
}

console.log(machine());
console.log('\n### Drop to audio flowing again\n');
console.log('| backoff | drops | p50 | p99 | reconnects | reconnecting, mean | replayed per reconnect |');
console.log('|---|---|---|---|---|---|---|');
await dropToFlowing('default (250 ms, jitter 0.5)', {});
await dropToFlowing('none (initialDelayMs 0)', { initialDelayMs: 0 });
console.log('\n### Replay buffer cost per live call\n');
console.log('| reconnect | calls | CPU per call-second | memory held per call | result |');
console.log('|---|---|---|---|---|');
await costPerCall('off', false, 2_000);
await costPerCall('on, a clip every 2 s', undefined, 2_000);
await costPerCall('on, no clip (buffer at replayMs)', undefined, 0);
