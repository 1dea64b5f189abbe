// What `frameMs` saves: N live calls pushing a 20 ms G.711 chunk each every tick into their
// sessions, to a bare ws sink in a child process, with the chunks sent as they come
// (frameMs 0) or grouped into 100 ms frames. Receiver CPU per chunk, A/B in alternating rounds.
//
//   npx tsx bench/telephonyFrames.ts [--calls 200] [--chunks 400] [--tick-ms 5] [--rounds 4]
//
// Ticks are shorter than 20 ms so a round takes seconds, but long enough that each socket is
// idle again by the next tick: without grouping every chunk is its own frame, as in real time.
import { parseArgs } from 'node:util';
import { asyncScheduler, lastValueFrom } from 'rxjs';
import WebSocket, { type ClientOptions } from 'ws';
import { conversationSession } from '../src/session/conversation.js';
import { LiveAudio } from '../src/telephony/LiveAudio.js';
import { fmt, KEY, machine, median, startSink } from './benchInternals.js';
import { forkRole, nextMessage } from './telephonyBench.js';

const { values } = parseArgs({ options: { calls: { type: 'string' }, chunks: { type: 'string' }, 'tick-ms': { type: 'string' }, rounds: { type: 'string' }, role: { type: 'string' } } });
const CALLS = Number(values.calls ?? 200);
const CHUNKS = Number(values.chunks ?? 400);
const TICK = Number(values['tick-ms'] ?? 5);
const ROUNDS = Number(values.rounds ?? 4);
const MULAW = { audio_format: 'mulaw', sample_rate: 8000, num_channels: 1 } as const;

async function sinkRole(): Promise<void> {
  const sink = await startSink();
  process.send!({ type: 'sink-ready', baseUrl: sink.baseUrl });
  await nextMessage(process, 'stop');
  process.send!({ type: 'sink-bytes', bytes: sink.bytes() }, undefined, {}, () => process.disconnect());
  await sink.close();
}

async function round(baseUrl: string, frameMs: number): Promise<{ usPerChunk: number; frames: number }> {
  const lives = Array.from({ length: CALLS }, () => new LiveAudio(MULAW, frameMs > 0 ? { frameMs, scheduler: asyncScheduler } : undefined));
  let opened = 0;
  let frames = 0;
  let allOpen!: () => void;
  const open = new Promise<void>((r) => (allOpen = r));
  const factory = (url: string, options: ClientOptions): WebSocket => {
    const ws = new WebSocket(url, options);
    ws.once('open', () => ++opened === CALLS && allOpen());
    const send = ws.send.bind(ws) as (data: unknown, opts?: unknown, cb?: (err?: Error) => void) => void;
    (ws as unknown as { send: typeof send }).send = (data, opts, cb) => {
      if (typeof data !== 'string' && typeof opts !== 'function') frames++;
      return send(data, opts, cb);
    };
    return ws;
  };
  const done = Promise.all(lives.map((l) => lastValueFrom(conversationSession(l.audio$, { baseUrl, apiKey: KEY, format: MULAW, webSocketFactory: factory }), { defaultValue: undefined })));
  await open;
  const chunk = new Uint8Array(160).fill(0x55);
  const cpu0 = process.cpuUsage();
  for (let k = 0; k < CHUNKS; k++) {
    for (const l of lives) l.push(chunk);
    await new Promise((r) => setTimeout(r, TICK));
  }
  for (const l of lives) l.end();
  await done;
  const u = process.cpuUsage(cpu0);
  return { usPerChunk: (u.user + u.system) / (CALLS * CHUNKS), frames };
}

if (values.role === 'sink') await sinkRole();
else {
  console.log(`bench/telephonyFrames: ${CALLS} calls × ${CHUNKS} chunks of 20 ms, a tick every ${TICK} ms, ${machine()}`);
  const sink = forkRole(new URL(import.meta.url).pathname, ['--role', 'sink']);
  const { baseUrl } = await nextMessage<{ type: 'sink-ready'; baseUrl: string }>(sink, 'sink-ready');
  const results: Record<number, { us: number[]; frames: number }> = { 0: { us: [], frames: 0 }, 100: { us: [], frames: 0 } };
  for (let r = 0; r < ROUNDS; r++) {
    for (const fm of r % 2 === 0 ? [0, 100] : [100, 0]) {
      const res = await round(baseUrl, fm);
      results[fm]!.us.push(res.usPerChunk);
      results[fm]!.frames = res.frames;
    }
  }
  sink.send({ type: 'stop' });
  const b = median(results[0]!.us);
  const a = median(results[100]!.us);
  console.log(`frameMs 0: ${fmt(b, 2)} µs per chunk (${results[0]!.frames} frames); frameMs 100: ${fmt(a, 2)} µs per chunk (${results[100]!.frames} frames); ratio ${fmt(a / b, 2)} (medians of ${ROUNDS} alternating rounds: ${results[0]!.us.map((x) => fmt(x, 2)).join(', ')} / ${results[100]!.us.map((x) => fmt(x, 2)).join(', ')})`);
  process.exit(0);
}
