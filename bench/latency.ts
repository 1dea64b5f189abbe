// Added latency of the library: from a chunk emitted (the source's `next`) to that frame's
// `message` event on a loopback ws server in the same process, against a bare ws client
// timing its own `send` the same way. Frames are 100 ms of audio emitted every 5 ms (a live
// source at 20x, never saturating the socket), once the socket is open.
// With LATENCY_BASELINE=/other/checkout/src/session/conversation.ts, that checkout's
// analyzeConversation runs too, interleaved in the same process (before/after comparisons).
// LATENCY_ROUNDS=n for more rounds (default 4).
// Run: npx tsx bench/latency.ts
import { performance } from 'node:perf_hooks';
import { lastValueFrom, Observable } from 'rxjs';
import WebSocket from 'ws';
import { analyzeConversation } from '../src/session/conversation.js';
import { createSessionStats, type SessionStats } from '../src/session/stats.js';
import { withAudioMeta } from '../src/audio/meta.js';
import { fmt, FRAME_100MS, KEY, machine, percentile, RAW, startSink, wsUrl } from './benchInternals.js';

const FRAMES = 400;
const INTERVAL_MS = 5;
const ROUNDS = Number(process.env['LATENCY_ROUNDS'] ?? 4);
const BASELINE = process.env['LATENCY_BASELINE'];

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Emits FRAMES frames every INTERVAL_MS once `ready()`, recording when each was handed to `next`. */
function timedSource(emitted: number[], ready: () => boolean): Observable<Uint8Array> {
  return withAudioMeta(
    new Observable<Uint8Array>((s) => {
      let stop = false;
      void (async () => {
        while (!ready()) await sleep(1);
        for (let i = 0; i < FRAMES && !stop; i++) {
          emitted.push(performance.now());
          s.next(new Uint8Array(FRAME_100MS));
          await sleep(INTERVAL_MS);
        }
        if (!stop) s.complete();
      })();
      return () => {
        stop = true;
      };
    }),
    { format: RAW },
  );
}

async function main(): Promise<void> {
  let arrivals: number[] = [];
  const sink = await startSink({ onBinary: (_d, now) => arrivals.push(now) });
  const lib: number[] = [];
  const base: number[] = [];
  const bare: number[] = [];
  const baseline = BASELINE ? ((await import(BASELINE)) as { analyzeConversation: typeof analyzeConversation }).analyzeConversation : undefined;

  const runWith = async (analyze: typeof analyzeConversation, into: number[]): Promise<void> => {
    arrivals = [];
    const emitted: number[] = [];
    const stats: SessionStats = createSessionStats();
    await lastValueFrom(timedSource(emitted, () => stats.status === 'streaming').pipe(analyze({ apiKey: KEY, baseUrl: sink.baseUrl, stats })));
    if (arrivals.length !== FRAMES) throw new Error(`library: ${arrivals.length} of ${FRAMES} frames arrived`);
    for (let i = 0; i < FRAMES; i++) into.push(arrivals[i]! - emitted[i]!);
  };
  const runLib = (): Promise<void> => runWith(analyzeConversation, lib);
  const runBase = async (): Promise<void> => {
    if (baseline) await runWith(baseline, base);
  };

  const runBare = async (): Promise<void> => {
    arrivals = [];
    const emitted: number[] = [];
    const ws = new WebSocket(wsUrl(sink.baseUrl), { perMessageDeflate: false });
    const closed = new Promise<void>((r) => ws.on('close', () => r()));
    await new Promise<void>((r) => ws.on('open', () => r()));
    ws.send('default');
    for (let i = 0; i < FRAMES; i++) {
      emitted.push(performance.now());
      ws.send(new Uint8Array(FRAME_100MS), { binary: true });
      await sleep(INTERVAL_MS);
    }
    ws.send('');
    await closed;
    if (arrivals.length !== FRAMES) throw new Error(`bare: ${arrivals.length} of ${FRAMES} frames arrived`);
    for (let i = 0; i < FRAMES; i++) bare.push(arrivals[i]! - emitted[i]!);
  };

  await runLib(); // warm-up, every path
  await runBase();
  await runBare();
  lib.length = 0;
  base.length = 0;
  bare.length = 0;
  for (let r = 0; r < ROUNDS; r++) {
    const order = [runLib, runBase, runBare];
    for (let i = 0; i < order.length; i++) await order[(i + r) % order.length]!();
  }
  await sink.close();

  const l = lib.sort((a, b) => a - b);
  const b = bare.sort((a, b2) => a - b2);
  const us = (ms: number) => `${fmt(ms * 1000, 0)} µs`;
  console.log(`latency: chunk emitted -> frame's message event on a loopback server, ${ROUNDS * FRAMES} frames each, ${FRAME_100MS} B every ${INTERVAL_MS} ms`);
  console.log(machine());
  console.log('              p50        p99        max');
  console.log(`library   ${us(percentile(l, 50)).padStart(9)}  ${us(percentile(l, 99)).padStart(9)}  ${us(l.at(-1)!).padStart(9)}`);
  if (baseline) {
    const o = base.sort((a, b2) => a - b2);
    console.log(`baseline  ${us(percentile(o, 50)).padStart(9)}  ${us(percentile(o, 99)).padStart(9)}  ${us(o.at(-1)!).padStart(9)}   (${BASELINE})`);
  }
  console.log(`bare ws   ${us(percentile(b, 50)).padStart(9)}  ${us(percentile(b, 99)).padStart(9)}  ${us(b.at(-1)!).padStart(9)}`);
  console.log(`added     ${us(percentile(l, 50) - percentile(b, 50)).padStart(9)}  ${us(percentile(l, 99) - percentile(b, 99)).padStart(9)}`);
}

void main().catch((err) => {
  console.error(err);
  process.exit(1);
});
