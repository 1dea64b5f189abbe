// The default session against the transport's ceiling, in one run: bare `ws` (with bufferutil)
// sending 64 KiB frames, the library with `reconnect: false`, and the library as it ships
// (reconnect with resume on), each streaming the same bytes of 3200 B chunks from an async
// iterable that reuses its buffer (audio already in memory) into the same loopback sink, which
// runs in a child process so its unmasking is charged to neither. Rounds are interleaved (the
// order rotates) and each figure is a per-round ratio of times, so the load of a shared machine
// falls on every client alike; the table shows medians and the load average before and after.
//
// The bare client is benchInternals' bareClient with 64 KiB frames (the same 1 MiB high-water mark).
//
// Run: npx tsx bench/ceiling.ts      (CEILING_MB=256 by default, CEILING_ROUNDS=5)
import os from 'node:os';
import { fileURLToPath } from 'node:url';
import { performance } from 'node:perf_hooks';
import { lastValueFrom } from 'rxjs';
import { fromAsyncIterable } from '../src/audio/fromAsyncIterable.js';
import { analyzeConversation } from '../src/session/conversation.js';
import { createSessionStats } from '../src/session/stats.js';
import { bareClient, bufferUtilInUse, fmt, KEY, machine, median, RAW, serveSink, withSinkProcess } from './benchInternals.js';

const SCRIPT = fileURLToPath(import.meta.url);
const MIB = 1 << 20;
const TOTAL = Number(process.env['CEILING_MB'] ?? 256) * MIB;
const ROUNDS = Number(process.env['CEILING_ROUNDS'] ?? 5);
const CHUNK = 3200;
const FRAME = 64 * 1024;

type Client = 'bare' | 'plain' | 'default';
const CLIENTS: readonly Client[] = ['bare', 'plain', 'default'];

/** The library over an async iterable of 3200 B chunks that reuses one buffer. */
async function library(baseUrl: string, reconnect: boolean): Promise<number> {
  const chunk = new Uint8Array(CHUNK);
  const count = Math.floor(TOTAL / CHUNK);
  async function* memory(): AsyncGenerator<Uint8Array> {
    for (let i = 0; i < count; i++) yield chunk;
  }
  const stats = createSessionStats();
  await lastValueFrom(fromAsyncIterable(memory(), { format: RAW }).pipe(analyzeConversation({ apiKey: KEY, baseUrl, stats, ...(reconnect ? {} : { reconnect: false as const }) })));
  if (stats.bytesSent !== count * CHUNK) throw new Error(`sent ${stats.bytesSent} of ${count * CHUNK}`);
  return stats.framesSent;
}

async function main(): Promise<void> {
  console.log(`ceiling: bare ws 64 KiB frames vs the library (reconnect: false, and the default), ${TOTAL / MIB} MiB of ${CHUNK} B chunks from an async iterable reusing its buffer; ${ROUNDS} interleaved rounds after a warm-up; ws masks with bufferutil: ${bufferUtilInUse()}`);
  console.log(machine());
  const load0 = os.loadavg()[0]!;
  const ratios: Record<Client, number[]> = { bare: [], plain: [], default: [] };
  const mbps: Record<Client, number[]> = { bare: [], plain: [], default: [] };
  const cpu: Record<Client, number[]> = { bare: [], plain: [], default: [] };
  const vsPlain: number[] = [];
  let frames = 0;
  await withSinkProcess(SCRIPT, [], async (baseUrl) => {
    for (let round = 0; round <= ROUNDS; round++) {
      const order = CLIENTS.map((_, i) => CLIENTS[(i + round) % CLIENTS.length]!);
      const wall = {} as Record<Client, number>;
      const used = {} as Record<Client, number>;
      for (const client of order) {
        const c0 = process.cpuUsage();
        const t0 = performance.now();
        if (client === 'bare') await bareClient(baseUrl, TOTAL / FRAME, FRAME);
        else frames = await library(baseUrl, client === 'default');
        wall[client] = (performance.now() - t0) / 1000;
        const c = process.cpuUsage(c0);
        used[client] = (c.user + c.system) / 1e6;
      }
      if (round === 0) continue; // warm-up
      for (const c of CLIENTS) {
        ratios[c].push(wall.bare / wall[c]);
        mbps[c].push(TOTAL / MIB / wall[c]);
        cpu[c].push(used[c]);
      }
      vsPlain.push(wall.plain / wall.default);
    }
  });
  const load1 = os.loadavg()[0]!;
  console.log(`load average (1 min) ${fmt(load0, 2)} → ${fmt(load1, 2)}; the library sent ${frames} frames for ${Math.floor(TOTAL / CHUNK)} chunks`);
  console.log('| client | MiB/s (median) | CPU s (median) | × bare ws (median of per-round ratios) |');
  console.log('|---|---|---|---|');
  const label: Record<Client, string> = { bare: 'bare ws, 64 KiB frames', plain: 'library, reconnect: false', default: 'library, default (reconnect on)' };
  for (const c of CLIENTS) console.log(`| ${label[c]} | ${fmt(median(mbps[c]))} | ${fmt(median(cpu[c]), 2)} | ${fmt(median(ratios[c]), 2)} |`);
  const d = median(ratios.default);
  const p = median(vsPlain);
  console.log(`\ndefault × bare: ${fmt(d, 2)} (goal ≥ 0.90: ${d >= 0.9 ? 'met' : 'NOT met'}); default × reconnect:false: ${fmt(p, 3)} (goal ≥ 0.95: ${p >= 0.95 ? 'met' : 'NOT met'})`);
  console.log(`per-round default/bare: ${ratios.default.map((r) => fmt(r, 2)).join(' ')}; default/plain: ${vsPlain.map((r) => fmt(r, 2)).join(' ')}`);
}

if (process.argv[2] === '--sink') serveSink();
else {
  void main().catch((err: unknown) => {
    console.error(err);
    process.exit(1);
  });
}
