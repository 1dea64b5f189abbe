// Throughput of the library against a bare ws client doing the same job (config frame, the
// frames with the same 1 MiB high-water mark, end frame, wait for done) into the same loopback
// sink, which runs in its own process so its unmasking is not charged to either.
//
// For 3200-byte frames (100 ms of s16le 16 kHz) and 160-byte frames (20 ms of 8 kHz mu-law,
// telephony), the library runs over each source: fromAsyncIterable (a generator),
// fromReadable (a Readable pushing the frames), fileSource (a WAV read 64 KiB at a time, and
// `size` bytes at a time)
// and a plain push Observable paced by a FlowControl given as `flow`. Each round runs every
// client once, in an order rotated per round; the ratio is bare time / library time per round
// (above 1: the library is faster), and the table shows medians. fileSource is also compared
// with a bare client reading the same file with a ReadStream of the same size ("bare file"),
// since 160-byte disk reads cost far more than the socket. CPU time is this process's
// user + system: steadier than wall time on a shared machine. The whole runs twice, in child
// processes: with bufferutil and with WS_NO_BUFFER_UTIL=1.
//
// Then peak RSS at a slow sink (40 MiB/s): each client streams 64 MiB of 3200-byte frames in
// a fresh process (same imports for all), 3 interleaved rounds, medians.
//
// Run: npx tsx bench/throughput.ts        (THROUGHPUT_ROUNDS=n for more rounds; default 5)
import os from 'node:os';
import { fileURLToPath } from 'node:url';
import { performance } from 'node:perf_hooks';
import { lastValueFrom } from 'rxjs';
import { analyzeConversation } from '../src/session/conversation.js';
import { createSessionStats } from '../src/session/stats.js';
import { bareClient, bufferUtilInUse, fmt, KEY, machine, MB, median, RAW, runSelf, serveSink, withSinkProcess } from './benchInternals.js';
import { bareFileClient, benchFile, makeSource, SOURCE_KINDS, type SourceKind } from './throughputSources.js';

const SCRIPT = fileURLToPath(import.meta.url);
const SIZES = [
  { size: 3200, total: 32 * MB },
  { size: 160, total: 4 * MB },
] as const;
const ROUNDS = Number(process.env['THROUGHPUT_ROUNDS'] ?? 5);
const TARGET = 0.95;
const SLOW_SINK = 40 * 1024 * 1024;
const RSS_BYTES = 64 * 1024 * 1024;
const RSS_ROUNDS = 3;

type Client = 'bare' | 'bareFile' | (typeof SOURCE_KINDS)[number];
const CLIENTS: readonly Client[] = ['bare', 'bareFile', ...SOURCE_KINDS];

interface SizeResult {
  readonly size: number;
  readonly bytes: number;
  readonly bufferutil: boolean;
  /** 1-minute load average before and after this frame size's rounds. */
  readonly load: readonly [number, number];
  /** Median MB/s per client. */
  readonly mbps: Record<Client, number>;
  /** Median per-round bare time / client time (wall and CPU); the file source also against bareFile. */
  readonly wall: Record<Client, number>;
  readonly cpu: Record<Client, number>;
  readonly fileVsBareFile: { readonly wall: number; readonly cpu: number };
  /** Median binary frames the library sent per run, per source. */
  readonly frames: Partial<Record<Client, number>>;
}

async function runClient(client: Client, baseUrl: string, count: number, size: number, file: string): Promise<number | undefined> {
  const bytes = count * size;
  if (client === 'bare') return void (await bareClient(baseUrl, count, size));
  if (client === 'bareFile') return void (await bareFileClient(baseUrl, file, size));
  const src = makeSource(client as SourceKind, count, size, file);
  const stats = createSessionStats();
  const done = await lastValueFrom(src.audio$.pipe(analyzeConversation({ apiKey: KEY, baseUrl, stats, format: RAW, ...(src.flow ? { flow: src.flow } : {}) })));
  if (stats.bytesSent !== bytes || stats.bytesRead !== bytes || done.type !== 'done') throw new Error(`${client}: sent ${stats.bytesSent} of ${bytes}`);
  return stats.framesSent;
}

async function measure(): Promise<void> {
  const results = await withSinkProcess(SCRIPT, [], async (baseUrl) => {
    const out: SizeResult[] = [];
    for (const { size, total } of SIZES) {
      const count = Math.round(total / size);
      const bytes = count * size;
      const file = benchFile(count, size);
      const load0 = os.loadavg()[0]!;
      const walls: Record<Client, number[]> = Object.fromEntries(CLIENTS.map((c) => [c, []])) as unknown as Record<Client, number[]>;
      const cpus: Record<Client, number[]> = Object.fromEntries(CLIENTS.map((c) => [c, []])) as unknown as Record<Client, number[]>;
      const frames: Partial<Record<Client, number[]>> = {};
      const ratio = { wall: {} as Record<Client, number[]>, cpu: {} as Record<Client, number[]> };
      const fileRatio = { wall: [] as number[], cpu: [] as number[] };
      for (const c of CLIENTS) {
        ratio.wall[c] = [];
        ratio.cpu[c] = [];
      }
      for (let round = 0; round <= ROUNDS; round++) {
        // Rotated per round, so warm-up and background load fall on every client alike.
        const order = CLIENTS.map((_, i) => CLIENTS[(i + round) % CLIENTS.length]!);
        const wall = {} as Record<Client, number>;
        const cpu = {} as Record<Client, number>;
        for (const client of order) {
          const c0 = process.cpuUsage();
          const t0 = performance.now();
          const sent = await runClient(client, baseUrl, count, size, file.file);
          wall[client] = (performance.now() - t0) / 1000;
          const c = process.cpuUsage(c0);
          cpu[client] = (c.user + c.system) / 1e6;
          if (sent !== undefined && round > 0) (frames[client] ??= []).push(sent);
        }
        if (round === 0) continue; // warm-up
        for (const c of CLIENTS) {
          walls[c].push(bytes / MB / wall[c]);
          cpus[c].push(cpu[c]);
          ratio.wall[c].push(wall.bare / wall[c]);
          ratio.cpu[c].push(cpu.bare / cpu[c]);
        }
        fileRatio.wall.push(wall.bareFile / wall.file);
        fileRatio.cpu.push(cpu.bareFile / cpu.file);
      }
      file.remove();
      const med = (r: Record<Client, number[]>): Record<Client, number> => Object.fromEntries(CLIENTS.map((c) => [c, median(r[c])])) as Record<Client, number>;
      out.push({
        size,
        bytes,
        bufferutil: bufferUtilInUse(),
        load: [load0, os.loadavg()[0]!],
        mbps: med(walls),
        wall: med(ratio.wall),
        cpu: med(ratio.cpu),
        fileVsBareFile: { wall: median(fileRatio.wall), cpu: median(fileRatio.cpu) },
        frames: Object.fromEntries(Object.entries(frames).map(([k, v]) => [k, median(v)])),
      });
    }
    return out;
  });
  process.stdout.write(JSON.stringify(results) + '\n');
}

/** One client streaming RSS_BYTES to the slow sink at `baseUrl`, in this (fresh) process. */
async function rssRun(client: Client, baseUrl: string): Promise<void> {
  const size = 3200;
  const count = Math.floor(RSS_BYTES / size);
  const file = client === 'file' || client === 'fileBlocks' || client === 'bareFile' ? benchFile(count, size) : undefined;
  const base = process.memoryUsage().rss / MB;
  let peak = base;
  const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss / MB)), 5);
  await runClient(client, baseUrl, count, size, file?.file ?? '');
  clearInterval(sampler);
  peak = Math.max(peak, (process.resourceUsage().maxRSS * 1024) / MB); // maxRSS is in KiB
  file?.remove();
  process.stdout.write(JSON.stringify({ base, peak }) + '\n');
}

async function rss(): Promise<{ load: readonly [number, number]; peak: Record<string, number>; base: Record<string, number> }> {
  const clients: readonly Client[] = ['bare', 'iterable', 'readable', 'fileBlocks', 'push'];
  const load0 = os.loadavg()[0]!;
  const peaks: Record<string, number[]> = {};
  const bases: Record<string, number[]> = {};
  await withSinkProcess(SCRIPT, [String(SLOW_SINK)], async (baseUrl) => {
    for (let round = 0; round < RSS_ROUNDS; round++) {
      for (let i = 0; i < clients.length; i++) {
        const client = clients[(i + round) % clients.length]!;
        const r = JSON.parse(await runSelf(SCRIPT, ['--rss', client, baseUrl])) as { base: number; peak: number };
        (peaks[client] ??= []).push(r.peak);
        (bases[client] ??= []).push(r.base);
      }
    }
  });
  const med = (r: Record<string, number[]>): Record<string, number> => Object.fromEntries(Object.entries(r).map(([k, v]) => [k, median(v)]));
  return { load: [load0, os.loadavg()[0]!], peak: med(peaks), base: med(bases) };
}

const LABEL: Record<Client, string> = {
  bare: 'bare ws',
  bareFile: 'bare ws + ReadStream (one frame per read)',
  iterable: 'fromAsyncIterable',
  readable: 'fromReadable',
  fileBlocks: 'fileSource (64 KiB reads)',
  file: 'fileSource (one frame per read)',
  push: 'push + FlowControl',
};

async function main(): Promise<void> {
  console.log(`throughput: library vs bare ws, medians of ${ROUNDS} interleaved rounds after a warm-up; ratio = bare time / library time per round (> 1: library faster)`);
  console.log(machine());
  let worstOn = Infinity;
  for (const [label, env] of [
    ['bufferutil on', {}],
    ['bufferutil off (WS_NO_BUFFER_UTIL=1)', { WS_NO_BUFFER_UTIL: '1' }],
  ] as const) {
    const results = JSON.parse(await runSelf(SCRIPT, ['--measure'], env)) as SizeResult[];
    console.log(`\n${label} (ws masks with bufferutil: ${results[0]!.bufferutil})`);
    console.log('| frame | MB per run | load (1 min) | source | MB/s | bare ws MB/s | ratio (wall) | ratio (CPU) | frames sent |');
    console.log('|---|---|---|---|---|---|---|---|---|');
    for (const r of results) {
      for (const c of SOURCE_KINDS) {
        // One frame per disk read is bound by the reads, not the session: compared with bare ws + ReadStream below.
        if (env.WS_NO_BUFFER_UTIL === undefined && c !== 'file') worstOn = Math.min(worstOn, r.wall[c]);
        console.log(`| ${r.size} B | ${fmt(r.bytes / MB)} | ${fmt(r.load[0], 2)} → ${fmt(r.load[1], 2)} | ${LABEL[c]} | ${fmt(r.mbps[c])} | ${fmt(r.mbps.bare)} | ${fmt(r.wall[c], 2)} | ${fmt(r.cpu[c], 2)} | ${r.frames[c] ?? ''} of ${Math.round(r.bytes / r.size)} chunks |`);
      }
      console.log(`| ${r.size} B | ${fmt(r.bytes / MB)} | | ${LABEL.file} vs ${LABEL.bareFile} | ${fmt(r.mbps.file)} | ${fmt(r.mbps.bareFile)} | ${fmt(r.fileVsBareFile.wall, 2)} | ${fmt(r.fileVsBareFile.cpu, 2)} | |`);
    }
  }
  console.log(`\nworst wall ratio with bufferutil, one-frame-per-read fileSource aside: ${fmt(worstOn, 2)} (target >= ${TARGET}): ${worstOn >= TARGET ? 'ok' : 'BELOW TARGET'}`);

  const m = await rss();
  console.log(`\npeak RSS streaming ${RSS_BYTES / MB} MB of 3200 B frames to a sink reading ${SLOW_SINK / 1024 / 1024} MiB/s, fresh process each, medians of ${RSS_ROUNDS}; load ${fmt(m.load[0], 2)} → ${fmt(m.load[1], 2)}`);
  console.log('| client | RSS before (MB) | peak RSS (MB) | peak − bare ws peak (MB) |');
  console.log('|---|---|---|---|');
  for (const c of Object.keys(m.peak) as Client[]) console.log(`| ${LABEL[c]} | ${fmt(m.base[c]!)} | ${fmt(m.peak[c]!)} | ${c === 'bare' ? '' : fmt(m.peak[c]! - m.peak['bare']!)} |`);
}

const mode = process.argv[2];
const fail = (err: unknown): void => {
  console.error(err);
  process.exit(1);
};
if (mode === '--sink') serveSink(process.argv[3] !== undefined ? { bytesPerSecond: Number(process.argv[3]) } : {});
else if (mode === '--measure') void measure().catch(fail);
else if (mode === '--rss') void rssRun(process.argv[3] as Client, process.argv[4]!).catch(fail);
else void main().catch(fail);
