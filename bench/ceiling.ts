// The default session against the transport's ceiling, in one run: bare `ws` (with bufferutil)
// sending 64 KiB frames, the library with `reconnect: false`, and the library as it ships
// (reconnect with resume on), each streaming the same bytes of 3200 B chunks from an async
// iterable that reuses its buffer (audio already in memory) into the same loopback sink, which
// runs in a child process so its unmasking is charged to neither. Rounds are interleaved (the
// order rotates) and each figure is a per-round ratio of times, so the load of a shared machine
// falls on every client alike; the table shows medians and the load average before and after.
//
// The bare client is benchInternals' bareClient with 64 KiB frames (the same 1 MiB high-water mark).
// A fourth client is the floor of the source itself: the same async iterable read with
// `for await` by hand, each chunk copied once into a 64 KiB frame sent when full, with the same
// high-water mark and no library: what any consumer of a 3200 B buffer-reusing source pays
// (an await per chunk, one copy) before the library adds anything.
// Beside the ratios: each client's CPU (this process, user and system apart: the system part is
// the socket writes and the page faults), its minor page faults (ws allocates each masked frame
// afresh; how often the allocator hands back pages it returned to the system depends on when
// the collector frees the frames), the sink's CPU (when the sink's CPU is the wall time, the
// sink is the ceiling), and the frames each sent.
//
// Run: npx tsx bench/ceiling.ts      (CEILING_MB=256 by default, CEILING_ROUNDS=5)
import os from 'node:os';
import { fileURLToPath } from 'node:url';
import { performance } from 'node:perf_hooks';
import { lastValueFrom } from 'rxjs';
import WebSocket from 'ws';
import { fromAsyncIterable } from '../src/audio/fromAsyncIterable.js';
import { analyzeConversation } from '../src/session/conversation.js';
import { createSessionStats } from '../src/session/stats.js';
import { bareClient, bufferUtilInUse, fmt, KEY, machine, median, RAW, serveSink, withSinkProcess, wsUrl } from './benchInternals.js';

const SCRIPT = fileURLToPath(import.meta.url);
const MIB = 1 << 20;
const TOTAL = Number(process.env['CEILING_MB'] ?? 256) * MIB;
const ROUNDS = Number(process.env['CEILING_ROUNDS'] ?? 5);
const CHUNK = 3200;
const FRAME = 64 * 1024;

type Client = 'bare' | 'floor' | 'plain' | 'default';
const CLIENTS: readonly Client[] = ['bare', 'floor', 'plain', 'default'];
const HIGH_WATER = 1 << 20;

/** The source every client but bare reads: `count` chunks of 3200 B, one buffer reused (audio already in memory). */
function memorySource(): { memory: () => AsyncGenerator<Uint8Array>; count: number } {
  const chunk = new Uint8Array(CHUNK);
  const count = Math.floor(TOTAL / CHUNK);
  async function* memory(): AsyncGenerator<Uint8Array> {
    for (let i = 0; i < count; i++) yield chunk;
  }
  return { memory, count };
}

/**
 * The floor of the source: `for await` over it by hand, each chunk copied once into a 64 KiB
 * frame sent when full (ws masks it into a buffer of its own, so the frame buffer is reused),
 * pausing above the same high-water mark until half of it is flushed; the frames it sent.
 */
async function floorClient(baseUrl: string): Promise<number> {
  const { memory } = memorySource();
  const ws = new WebSocket(wsUrl(baseUrl), { perMessageDeflate: false });
  const closed = new Promise<number>((resolve, reject) => {
    ws.once('error', reject);
    ws.once('close', (code) => (code === 1000 ? resolve(code) : reject(new Error(`closed ${code}`))));
  });
  await new Promise<void>((resolve) => ws.once('open', () => resolve()));
  ws.send('default');
  const frame = Buffer.allocUnsafe(FRAME);
  let used = 0;
  let frames = 0;
  let inFlight = 0;
  let wake: (() => void) | undefined;
  const sent = (len: number) => (): void => {
    inFlight -= len;
    if (wake !== undefined && inFlight <= HIGH_WATER / 2) {
      const w = wake;
      wake = undefined;
      w();
    }
  };
  const onFull = sent(FRAME);
  for await (const chunk of memory()) {
    let off = 0;
    while (off < chunk.byteLength) {
      const n = Math.min(chunk.byteLength - off, FRAME - used);
      frame.set(off === 0 && n === chunk.byteLength ? chunk : chunk.subarray(off, off + n), used);
      used += n;
      off += n;
      if (used === FRAME) {
        ws.send(frame, { binary: true }, onFull);
        inFlight += FRAME;
        frames++;
        used = 0;
      }
    }
    if (inFlight > HIGH_WATER) await new Promise<void>((resolve) => (wake = resolve));
  }
  if (used > 0) {
    ws.send(frame.subarray(0, used), { binary: true });
    frames++;
  }
  ws.send('');
  await closed;
  return frames;
}

/** The library over an async iterable of 3200 B chunks that reuses one buffer; the frames it sent. */
async function library(baseUrl: string, reconnect: boolean): Promise<number> {
  const { memory, count } = memorySource();
  const stats = createSessionStats();
  await lastValueFrom(fromAsyncIterable(memory(), { format: RAW }).pipe(analyzeConversation({ apiKey: KEY, baseUrl, stats, ...(reconnect ? {} : { reconnect: false as const }) })));
  if (stats.bytesSent !== count * CHUNK) throw new Error(`sent ${stats.bytesSent} of ${count * CHUNK}`);
  return stats.framesSent;
}

interface Figures {
  /** bare time / this client's time, per round. */
  readonly ratio: number[];
  readonly mibps: number[];
  /** This process's CPU (user, system) and the sink's, in seconds, per round. */
  readonly user: number[];
  readonly system: number[];
  readonly sink: number[];
  readonly frames: number[];
  /** This process's minor page faults, per round. */
  readonly faults: number[];
  /** Wall seconds, per round. */
  readonly wall: number[];
}

async function main(): Promise<void> {
  console.log(`ceiling: bare ws 64 KiB frames vs the source read by hand (the floor) and the library (reconnect: false, and the default), ${TOTAL / MIB} MiB of ${CHUNK} B chunks from an async iterable reusing its buffer; ${ROUNDS} interleaved rounds after a warm-up; ws masks with bufferutil: ${bufferUtilInUse()}`);
  console.log(machine());
  const loads: string[] = [];
  const figures = Object.fromEntries(CLIENTS.map((c) => [c, { ratio: [], mibps: [], user: [], system: [], sink: [], frames: [], faults: [], wall: [] } as Figures])) as Record<Client, Figures>;
  const vsPlain: number[] = [];
  const vsFloor: number[] = [];
  await withSinkProcess(SCRIPT, [], async (baseUrl, sink) => {
    for (let round = 0; round <= ROUNDS; round++) {
      const order = CLIENTS.map((_, i) => CLIENTS[(i + round) % CLIENTS.length]!);
      const wall = {} as Record<Client, number>;
      if (round > 0) loads.push(fmt(os.loadavg()[0]!, 2));
      for (const client of order) {
        const s0 = sink.cpuSeconds();
        const f0 = process.resourceUsage().minorPageFault;
        const c0 = process.cpuUsage();
        const t0 = performance.now();
        const frames =
          client === 'bare' ? (await bareClient(baseUrl, TOTAL / FRAME, FRAME), TOTAL / FRAME) : client === 'floor' ? await floorClient(baseUrl) : await library(baseUrl, client === 'default');
        wall[client] = (performance.now() - t0) / 1000;
        const c = process.cpuUsage(c0);
        const faults = process.resourceUsage().minorPageFault - f0;
        if (round === 0) continue; // warm-up
        const f = figures[client];
        f.mibps.push(TOTAL / MIB / wall[client]);
        f.user.push(c.user / 1e6);
        f.system.push(c.system / 1e6);
        f.sink.push(sink.cpuSeconds() - s0);
        f.frames.push(frames);
        f.faults.push(faults);
        f.wall.push(wall[client]);
      }
      if (round === 0) continue;
      for (const c of CLIENTS) figures[c].ratio.push(wall.bare / wall[c]);
      vsPlain.push(wall.plain / wall.default);
      vsFloor.push(wall.floor / wall.default);
    }
  });
  console.log(`load average (1 min) at each round: ${loads.join(', ')}; then ${fmt(os.loadavg()[0]!, 2)}`);
  // Each client's fastest round against bare's fastest: on a shared machine a run is only ever
  // slowed down by the others, so the fastest is the steadiest estimate of what it costs itself.
  const fastest = (c: Client): number => Math.min(...figures.bare.wall) / Math.min(...figures[c].wall);
  console.log('| client | MiB/s (median) | × bare ws (median of per-round ratios) | × bare ws (fastest / fastest) | CPU s, user + system (medians) | minor page faults (median) | sink CPU s (median) | frames |');
  console.log('|---|---|---|---|---|---|---|---|');
  const label: Record<Client, string> = {
    bare: 'bare ws, 64 KiB frames',
    floor: 'the source by hand (`for await`, one copy, 64 KiB frames)',
    plain: 'library, `reconnect: false`',
    default: 'library, default (reconnect on)',
  };
  for (const c of CLIENTS) {
    const f = figures[c];
    console.log(
      `| ${label[c]} | ${fmt(median(f.mibps))} | ${fmt(median(f.ratio), 2)} | ${fmt(fastest(c), 2)} | ${fmt(median(f.user), 3)} + ${fmt(median(f.system), 3)} | ${fmt(median(f.faults), 0)} | ${fmt(median(f.sink), 2)} | ${median(f.frames)} |`,
    );
  }
  const d = median(figures.default.ratio);
  const p = median(vsPlain);
  console.log(`\ndefault × bare: ${fmt(d, 2)} (goal ≥ 0.90: ${d >= 0.9 ? 'met' : 'NOT met'}); default × reconnect:false: ${fmt(p, 3)} (goal ≥ 0.95: ${p >= 0.95 ? 'met' : 'NOT met'})`);
  console.log(`floor × bare: ${fmt(median(figures.floor.ratio), 2)}; default × floor: ${fmt(median(vsFloor), 3)}`);
  const plainFastest = Math.min(...figures.plain.wall) / Math.min(...figures.default.wall);
  console.log(`fastest runs: default × bare ${fmt(fastest('default'), 2)}, floor × bare ${fmt(fastest('floor'), 2)}, default × reconnect:false ${fmt(plainFastest, 3)}`);
  console.log(`per-round default/bare: ${figures.default.ratio.map((r) => fmt(r, 2)).join(' ')}; floor/bare: ${figures.floor.ratio.map((r) => fmt(r, 2)).join(' ')}; default/plain: ${vsPlain.map((r) => fmt(r, 2)).join(' ')}; default/floor: ${vsFloor.map((r) => fmt(r, 2)).join(' ')}`);
}

if (process.argv[2] === '--sink') serveSink();
else {
  void main().catch((err: unknown) => {
    console.error(err);
    process.exit(1);
  });
}
