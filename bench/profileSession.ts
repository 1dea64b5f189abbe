// Profile the library's send path alone: `node --cpu-prof --import tsx bench/profileSession.ts [bytes] [source]`
// streams 64 MB in frames of `bytes` (default 3200) through analyzeConversation into a loopback
// sink in a child process (so its unmasking is not in the profile). `source` is pull (the bench
// pull source, default), iterable (fromAsyncIterable), readable (fromReadable) or file (fileSource).
// `--no-reconnect` runs one plain session (reconnect: false) instead of the resilient default.
// `--compare [source]`: per-chunk CPU of the default (reconnect on) against reconnect: false,
// for 160 B and 3200 B chunks, in interleaved rounds (PROFILE_ROUNDS, default 7; PROFILE_SCALE=4
// for runs four times longer) in this one process, medians and the on/off ratio per round (goal: on within 10 % of off), and the ratio of
// each mode's least-disturbed run (the minimum over the rounds: on a loaded machine a run is only
// ever slowed down by the others, so the minimum is the steadiest estimate of its own cost).
import os from 'node:os';
import { fileURLToPath } from 'node:url';
import { performance } from 'node:perf_hooks';
import { lastValueFrom } from 'rxjs';
import { analyzeConversation } from '../src/session/conversation.js';
import { createSessionStats } from '../src/session/stats.js';
import { bareClient, fmt, KEY, machine, MB, median, RAW, serveSink, withSinkProcess } from './benchInternals.js';
import { benchFile, makeSource, type SourceKind } from './throughputSources.js';

const SCRIPT = fileURLToPath(import.meta.url);

/**
 * 64 MB of 3200 B chunks, 8 MB of smaller ones, times PROFILE_SCALE (default 1): on a loaded
 * machine a run of a tenth of a second is at the mercy of one descheduling; longer runs are steadier.
 */
const SCALE = Number(process.env['PROFILE_SCALE'] ?? 1);
const countFor = (size: number): number => Math.round(((size >= 3200 ? 64 : 8) * SCALE * MB) / size);

/** One session of `count` chunks of `size` bytes from `kind`; its stats. */
async function session(baseUrl: string, kind: SourceKind, size: number, count: number, reconnect: boolean, file?: string): Promise<ReturnType<typeof createSessionStats>> {
  const src = makeSource(kind, count, size, file);
  const stats = createSessionStats();
  await lastValueFrom(src.audio$.pipe(analyzeConversation({ apiKey: KEY, baseUrl, stats, format: RAW, ...(reconnect ? {} : { reconnect: false as const }), ...(src.flow ? { flow: src.flow } : {}) })));
  if (stats.bytesSent !== count * size) throw new Error(`sent ${stats.bytesSent} of ${count * size}`);
  return stats;
}

async function main(): Promise<void> {
  const size = Number(process.argv[2] ?? 3200);
  const kind = (process.argv[3] ?? 'pull') as SourceKind;
  const count = countFor(size);
  await withSinkProcess(SCRIPT, [], async (baseUrl) => {
    const c0 = process.cpuUsage();
    const t0 = performance.now();
    if (kind === ('bare' as SourceKind)) {
      await bareClient(baseUrl, count, size);
      const secs = (performance.now() - t0) / 1000;
      const c = process.cpuUsage(c0);
      console.log(`bare ${size} B: ${((count * size) / MB / secs).toFixed(1)} MB/s, CPU ${((c.user + c.system) / 1000).toFixed(0)} ms`);
      return;
    }
    const file = kind === 'file' ? benchFile(count, size) : undefined;
    const stats = await session(baseUrl, kind, size, count, !process.argv.includes('--no-reconnect'), file?.file);
    const secs = (performance.now() - t0) / 1000;
    const c = process.cpuUsage(c0);
    file?.remove();
    console.log(`${kind} ${size} B: ${(stats.bytesSent / MB / secs).toFixed(1)} MB/s, CPU ${((c.user + c.system) / 1000).toFixed(0)} ms, ${stats.framesSent} frames for ${count} chunks, peak ${(stats.peakBufferedBytes / MB).toFixed(1)} MB buffered`);
  });
}

/** The process's CPU time per chunk, in µs, of one session. */
async function cpuPerChunk(baseUrl: string, kind: SourceKind, size: number, reconnect: boolean): Promise<number> {
  const count = countFor(size);
  const c0 = process.cpuUsage();
  await session(baseUrl, kind, size, count, reconnect);
  const c = process.cpuUsage(c0);
  return (c.user + c.system) / count;
}

async function compare(): Promise<void> {
  const kind = (process.argv[3] ?? 'pull') as SourceKind;
  const rounds = Number(process.env['PROFILE_ROUNDS'] ?? 7);
  console.log(`per-chunk CPU, reconnect on (the default) vs reconnect: false, source ${kind}, ${rounds} interleaved rounds after a warm-up, medians`);
  console.log(machine());
  console.log('| chunk | MB per run | load (1 min) | off µs/chunk | on µs/chunk | on / off (median of per-round ratios) | on / off (least-disturbed runs: min / min) |');
  console.log('|---|---|---|---|---|---|---|');
  await withSinkProcess(SCRIPT, [], async (baseUrl) => {
    for (const size of [160, 3200]) {
      const load0 = os.loadavg()[0]!;
      const on: number[] = [];
      const off: number[] = [];
      const ratio: number[] = [];
      for (let round = 0; round <= rounds; round++) {
        // Which goes first alternates, so warm-up and load fall on both alike.
        const onFirst = round % 2 === 0;
        const a = await cpuPerChunk(baseUrl, kind, size, onFirst);
        const b = await cpuPerChunk(baseUrl, kind, size, !onFirst);
        if (round === 0) continue; // warm-up
        const [onUs, offUs] = onFirst ? [a, b] : [b, a];
        on.push(onUs);
        off.push(offUs);
        ratio.push(onUs / offUs);
      }
      console.log(`| ${size} B | ${fmt((countFor(size) * size) / MB, 0)} | ${fmt(load0, 2)} → ${fmt(os.loadavg()[0]!, 2)} | ${fmt(median(off), 2)} | ${fmt(median(on), 2)} | ${fmt(median(ratio), 3)} | ${fmt(Math.min(...on) / Math.min(...off), 3)} |`);
    }
  });
}

const fail = (err: unknown): void => {
  console.error(err);
  process.exit(1);
};
if (process.argv[2] === '--sink') serveSink();
else if (process.argv[2] === '--compare') void compare().catch(fail);
else void main().catch(fail);
