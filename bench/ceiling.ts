// What a session costs per chunk against what a user would otherwise write, in user CPU of the
// whole run (on this shared machine wall time swings 2x between rounds; user CPU holds to a few
// per cent). Four clients stream the same bytes (1 GiB of 3200 B chunks by default) into the
// same loopback sink, which runs in a child process so its unmasking is charged to none:
//
// - the library as it ships (reconnect with resume on), and with `reconnect: false`, over
//   `fromAsyncIterable` of an async iterable that reuses one buffer (audio already in memory);
// - the hand-written client of the same source: `for await` over it, each chunk copied once
//   into a 64 KiB frame sent when full, bare ws, the same 1 MiB high-water mark: what any
//   consumer of a buffer-reusing source pays (an await per chunk, one copy) with no library;
// - bare ws sending one prepared 64 KiB buffer (benchInternals' bareClient): the transport.
//
// Each run is a fresh process (no client pays for another's garbage or JIT), its CPU taken from
// just before it connects to the sink's close (process.cpuUsage: every thread, the collector's
// included). Runs go A B C D A B C D ..., ROUNDS times; figures are medians, ratios the medians
// of per-round ratios, and each client's least run (a shared machine only ever slows a run down). Beside them: frames sent, collections (scavenges / others), page faults.
//
// Run: npx tsx bench/ceiling.ts      (CEILING_MB=1024 by default, CEILING_ROUNDS=5; CEILING_AGAINST=DIR
// adds the library of another checkout to the same rounds, CEILING_CLIENTS=default,floor a subset)
import { spawn } from 'node:child_process';
import os from 'node:os';
import { fileURLToPath } from 'node:url';
import { constants, performance, PerformanceObserver } from 'node:perf_hooks';
import { lastValueFrom } from 'rxjs';
import WebSocket from 'ws';
import { fromAsyncIterable } from '../src/audio/fromAsyncIterable.js';
import { analyzeConversation } from '../src/session/conversation.js';
import { createSessionStats } from '../src/session/stats.js';
import { bareClient, bufferUtilInUse, fmt, KEY, machine, median, RAW, serveSink, withSinkProcess, wsUrl } from './benchInternals.js';

const SCRIPT = fileURLToPath(import.meta.url);
const MIB = 1 << 20;
const TOTAL = Number(process.env['CEILING_MB'] ?? 1024) * MIB;
const ROUNDS = Number(process.env['CEILING_ROUNDS'] ?? 5);
const CHUNK = 3200;
const FRAME = 64 * 1024;

type Client = 'bare' | 'floor' | 'plain' | 'default' | 'default-against' | 'plain-against';
/**
 * CEILING_AGAINST=DIR: also run the library of another checkout (its src/, through tsx) in the
 * same rounds, as `default-against` and `plain-against`: before and after under the same load.
 */
const AGAINST = process.env['CEILING_AGAINST'];
const ALL_CLIENTS: readonly Client[] = AGAINST ? ['default', 'plain', 'default-against', 'plain-against', 'floor', 'bare'] : ['default', 'plain', 'floor', 'bare'];
/** CEILING_CLIENTS=default,floor runs some of them (for a profile). */
const CLIENTS: readonly Client[] = process.env['CEILING_CLIENTS'] ? (process.env['CEILING_CLIENTS'].split(',') as Client[]) : ALL_CLIENTS;
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
type Library = { fromAsyncIterable: typeof fromAsyncIterable; analyzeConversation: typeof analyzeConversation; createSessionStats: typeof createSessionStats };

/** This checkout's library, or (against) the other checkout's, imported before a run is timed. */
async function loadLibrary(against: boolean): Promise<Library> {
  let lib: Library = { fromAsyncIterable, analyzeConversation, createSessionStats };
  if (against) {
    const at = (file: string): string => new URL(`src/${file}`, `file://${AGAINST!.replace(/\/?$/, '/')}`).href;
    lib = {
      fromAsyncIterable: ((await import(at('audio/fromAsyncIterable.ts'))) as { fromAsyncIterable: typeof fromAsyncIterable }).fromAsyncIterable,
      analyzeConversation: ((await import(at('session/conversation.ts'))) as { analyzeConversation: typeof analyzeConversation }).analyzeConversation,
      createSessionStats: ((await import(at('session/stats.ts'))) as { createSessionStats: typeof createSessionStats }).createSessionStats,
    };
  }
  return lib;
}

async function library(baseUrl: string, reconnect: boolean, lib: Library): Promise<number> {
  const { memory, count } = memorySource();
  const stats = lib.createSessionStats();
  await lastValueFrom(lib.fromAsyncIterable(memory(), { format: RAW }).pipe(lib.analyzeConversation({ apiKey: KEY, baseUrl, stats, ...(reconnect ? {} : { reconnect: false as const }) })));
  if (stats.bytesSent !== count * CHUNK) throw new Error(`sent ${stats.bytesSent} of ${count * CHUNK}`);
  if (process.env['CEILING_THREADS']) process.stderr.write(`${reconnect ? 'default' : 'plain'}: ${stats.pauses} pauses, ${stats.framesSent} frames\n`);
  return stats.framesSent;
}

/** What one run of one client reports (its own process, from connect to close). */
interface RunReport {
  readonly client: Client;
  /** User and system CPU of the run, in seconds (process.cpuUsage: every thread, the collector's included). */
  readonly user: number;
  readonly system: number;
  /** User CPU of the whole process, module loading included (seconds). */
  readonly processUser: number;
  readonly wall: number;
  readonly frames: number;
  readonly faults: number;
  /** Collections during the run (perf_hooks 'gc' entries): scavenges and the rest. */
  readonly scavenges: number;
  readonly majors: number;
}

/** Child: run `client` once against the sink at `baseUrl`, print its report as one JSON line. */
async function runClient(client: Client, baseUrl: string): Promise<void> {
  let scavenges = 0;
  let majors = 0;
  const gcs = new PerformanceObserver((list) => {
    for (const e of list.getEntries()) {
      if ((e as unknown as { detail?: { kind?: number } }).detail?.kind === constants.NODE_PERFORMANCE_GC_MINOR) scavenges++;
      else majors++;
    }
  });
  gcs.observe({ entryTypes: ['gc'] });
  const lib = client === 'bare' || client === 'floor' ? undefined : await loadLibrary(client.endsWith('-against'));
  const f0 = process.resourceUsage().minorPageFault;
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  const frames =
    client === 'bare'
      ? (await bareClient(baseUrl, TOTAL / FRAME, FRAME), TOTAL / FRAME)
      : client === 'floor'
        ? await floorClient(baseUrl)
        : await library(baseUrl, client.startsWith('default'), lib!);
  const wall = (performance.now() - t0) / 1000;
  const c = process.cpuUsage(c0);
  const faults = process.resourceUsage().minorPageFault - f0;
  await new Promise((r) => setImmediate(r));
  gcs.disconnect();
  if (process.env['CEILING_THREADS']) {
    // Where the CPU went, per thread (/proc/self/task): the main thread, V8's collector helpers, libuv's pool.
    const { readdirSync, readFileSync } = await import('node:fs');
    const per = new Map<string, number>();
    for (const t of readdirSync('/proc/self/task')) {
      const stat = readFileSync(`/proc/self/task/${t}/stat`, 'utf8');
      const name = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      per.set(`${name}/${t}`, Number(f[11]) * 10);
    }
    process.stderr.write(`${client} user ms by thread (whole process): ${[...per].map(([n, ms]) => `${n} ${ms}`).join(', ')}\n`);
  }
  const report: RunReport = { client, user: c.user / 1e6, system: c.system / 1e6, processUser: process.cpuUsage().user / 1e6, wall, frames, faults, scavenges, majors };
  process.stdout.write(`${JSON.stringify(report)}\n`);
}

/** Parent: one fresh process per run of a client. */
function spawnRun(client: Client, baseUrl: string): Promise<RunReport> {
  return new Promise((resolve, reject) => {
    // CEILING_NODE_ARGS: flags for the runs (`--cpu-prof --cpu-prof-dir=DIR`, `--trace-gc`).
    const flags = (process.env['CEILING_NODE_ARGS'] ?? '').split(' ').filter(Boolean);
    const child = spawn(process.execPath, [...flags, '--import', 'tsx', SCRIPT, '--client', client, baseUrl], { stdio: ['ignore', 'pipe', 'inherit'], env: process.env });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString('utf8')));
    child.on('error', reject);
    child.on('close', (code) => {
      if (code !== 0) return reject(new Error(`${client} run exited with ${code}`));
      resolve(JSON.parse(out.trim().split('\n').at(-1)!) as RunReport);
    });
  });
}

const LABEL: Record<Client, string> = {
  'default-against': `library of ${AGAINST ?? ''}, default`,
  'plain-against': `library of ${AGAINST ?? ''}, \`reconnect: false\``,
  default: 'library, default (reconnect on)',
  plain: 'library, `reconnect: false`',
  floor: 'hand-written (`for await`, one copy into a 64 KiB frame, bare ws, same flow control)',
  bare: 'bare ws, one prepared 64 KiB buffer',
};

async function main(): Promise<void> {
  console.log(
    `ceiling: ${TOTAL / MIB} MiB of ${CHUNK} B chunks from an async iterable reusing its buffer, into a loopback sink (another process); each run a fresh process, ${ROUNDS} rounds in the order ${CLIENTS.join(' ')}; ws masks with bufferutil: ${bufferUtilInUse()}`,
  );
  console.log(machine());
  const loads: string[] = [];
  const runs = Object.fromEntries(CLIENTS.map((c) => [c, [] as RunReport[]])) as Record<Client, RunReport[]>;
  const sinkCpu = Object.fromEntries(CLIENTS.map((c) => [c, [] as number[]])) as Record<Client, number[]>;
  await withSinkProcess(SCRIPT, [], async (baseUrl, sink) => {
    for (let round = 0; round < ROUNDS; round++) {
      loads.push(fmt(os.loadavg()[0]!, 2));
      for (const client of CLIENTS) {
        const s0 = sink.cpuSeconds();
        const r = await spawnRun(client, baseUrl);
        sinkCpu[client].push(sink.cpuSeconds() - s0);
        runs[client].push(r);
      }
    }
  });
  console.log(`load average (1 min) at each round: ${loads.join(', ')}; then ${fmt(os.loadavg()[0]!, 2)}`);
  const med = (c: Client, k: keyof RunReport): number => median(runs[c].map((r) => r[k] as number));
  const floorUser = CLIENTS.includes('floor') ? med('floor', 'user') : Number.NaN;
  const least = (c: Client): number => Math.min(...runs[c].map((r) => r.user));
  console.log('| client | user CPU s (median; runs) | × hand-written | least (× least of hand-written) | system CPU s | MiB/s (median) | frames | scavenges / other GCs | minor faults | sink CPU s |');
  console.log('|---|---|---|---|---|---|---|---|---|');
  for (const c of CLIENTS) {
    const users = runs[c].map((r) => fmt(r.user * 1000, 0)).join(', ');
    if (!CLIENTS.includes('floor')) {
      console.log(`${c}: user ${fmt(med(c, 'user') * 1000, 0)} ms`);
      continue;
    }
    console.log(
      `| ${LABEL[c]} | **${fmt(med(c, 'user') * 1000, 0)} ms** (${users}) | ${fmt(med(c, 'user') / floorUser, 2)} | ${fmt(least(c) * 1000, 0)} ms (${fmt(least(c) / least('floor'), 2)}) | ${fmt(med(c, 'system'), 3)} | ${fmt(median(runs[c].map((r) => TOTAL / MIB / r.wall)))} | ${med(c, 'frames')} | ${med(c, 'scavenges')} / ${med(c, 'majors')} | ${med(c, 'faults')} | ${fmt(median(sinkCpu[c]), 2)} |`,
    );
  }
  // Per round, so the load of a shared machine falls on both sides of each ratio alike.
  const has = (c: Client): boolean => CLIENTS.includes(c);
  const perRound = (a: Client, b: Client): string => runs[a].map((r, i) => fmt(r.user / runs[b][i]!.user, 2)).join(' ');
  const ratio = (a: Client, b: Client): number => median(runs[a].map((r, i) => r.user / runs[b][i]!.user));
  console.log('');
  if (has('default') && has('floor')) {
    const d = ratio('default', 'floor');
    console.log(`user CPU, median of per-round ratios: default × hand-written ${fmt(d, 2)} (goal ≤ 1.3: ${d <= 1.3 ? 'met' : 'NOT met'}; per round ${perRound('default', 'floor')}); least / least ${fmt(least('default') / least('floor'), 2)}`);
  }
  if (has('plain') && has('floor')) console.log(`reconnect:false × hand-written ${fmt(ratio('plain', 'floor'), 2)} (per round ${perRound('plain', 'floor')}); least / least ${fmt(least('plain') / least('floor'), 2)}`);
  if (has('default') && has('plain')) console.log(`default × reconnect:false ${fmt(ratio('default', 'plain'), 2)} (per round ${perRound('default', 'plain')})`);
  if (has('default-against') && has('floor')) {
    console.log(`against ${AGAINST}: default × hand-written ${fmt(ratio('default-against', 'floor'), 2)} (per round ${perRound('default-against', 'floor')}); reconnect:false × hand-written ${fmt(ratio('plain-against', 'floor'), 2)} (per round ${perRound('plain-against', 'floor')})`);
    console.log(`this checkout × ${AGAINST}: default ${fmt(ratio('default', 'default-against'), 2)} (per round ${perRound('default', 'default-against')}); reconnect:false ${fmt(ratio('plain', 'plain-against'), 2)} (per round ${perRound('plain', 'plain-against')})`);
  }
  if (has('floor') && has('bare')) console.log(`hand-written × bare ${fmt(ratio('floor', 'bare'), 2)} (per round ${perRound('floor', 'bare')})`);
  if (has('floor')) {
    const chunks = Math.floor(TOTAL / CHUNK);
    const beyond = (c: Client): string => `${c} ${fmt(((med(c, 'user') - floorUser) / chunks) * 1e9, 0)} ns`;
    console.log(`beyond the hand-written client, per chunk (medians): ${CLIENTS.filter((c) => c !== 'floor').map(beyond).join(', ')} (${chunks} chunks)`);
  }
}

if (process.argv[2] === '--sink') serveSink();
else if (process.argv[2] === '--client') void runClient(process.argv[3] as Client, process.argv[4]!);
else {
  void main().catch((err: unknown) => {
    console.error(err);
    process.exit(1);
  });
}
