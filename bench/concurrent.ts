// 200 concurrent real-time sessions in one process against the emulator: each streams 20 s
// of s16le 16 kHz paced at 1x through `pace`, over 8 organizations of 25 connections each.
// The emulator plays a probe event every 250 ms of audio, as soon as the audio that completes
// that time has arrived. A probe's delay is its receive time minus when that audio was due on
// the audio-time schedule (first chunk's emission + the chunk's start in the audio), so it
// includes pacing lateness; the pipeline-only delay (from the chunk's actual emission) is
// printed too. Prints the process's CPU share (cpuUsage / wall, client and emulator
// together), event-loop delay, and probe delays p50/p99.
// Run: npx tsx bench/concurrent.ts
import { performance, monitorEventLoopDelay } from 'node:perf_hooks';
import { from, lastValueFrom, tap } from 'rxjs';
import { pace } from '../src/audio/pace.js';
import { analyzeConversation } from '../src/session/conversation.js';
import { createSessionStats } from '../src/session/stats.js';
import { startEmulator } from '../src/emulator/server.js';
import { fmt, FRAME_100MS, machine, percentile, RAW } from './benchInternals.js';

const SESSIONS = 200;
const ORGS = 8;
const PER_ORG = 25;
const SECONDS = 20;
const PROBE_EVERY_MS = 250;
const FRAME_MS = 100;
/** Sessions start spread over this window, as live calls do, rather than in one tick. */
const RAMP_MS = 1_000;

async function main(): Promise<void> {
  const steps = Array.from({ length: (SECONDS * 1000) / PROBE_EVERY_MS }, (_, k) => ({
    at_ms: (k + 1) * PROBE_EVERY_MS,
    event: { type: 'probe', at_ms: (k + 1) * PROBE_EVERY_MS, note: 'x'.repeat(120) },
  }));
  const organizations = Array.from({ length: ORGS }, (_, i) => ({ id: `org-${i}`, keys: [`key-${i}`], concurrency: PER_ORG }));
  const emu = await startEmulator({ organizations, scenario: { steps } });

  const frame = new Uint8Array(FRAME_100MS);
  const frames = Array.from({ length: (SECONDS * 1000) / FRAME_MS }, () => frame);
  const delays: number[] = [];
  const pipelineDelays: number[] = [];
  const failures: string[] = [];
  const LOOP_RESOLUTION_MS = 10;
  const loop = monitorEventLoopDelay({ resolution: LOOP_RESOLUTION_MS });
  loop.enable();

  const runOne = async (i: number): Promise<void> => {
    await new Promise((r) => setTimeout(r, (i * RAMP_MS) / SESSIONS));
    const stats = createSessionStats();
    const emittedAt: number[] = [];
    const audio$ = from(frames).pipe(
      pace({ format: RAW }),
      tap(() => emittedAt.push(performance.now())),
    );
    const session$ = audio$.pipe(
      analyzeConversation({ apiKey: `key-${i % ORGS}`, baseUrl: emu.baseUrl, format: RAW, stats }),
      tap((e) => {
        if (e.type !== 'unknown' || e.event_type !== 'probe') return;
        const now = performance.now();
        // The chunk that completes `atMs` of audio; pace releases a chunk when its audio starts.
        const chunk = Math.ceil((e.data['at_ms'] as number) / FRAME_MS) - 1;
        delays.push(now - (emittedAt[0]! + chunk * FRAME_MS));
        pipelineDelays.push(now - emittedAt[chunk]!);
      }),
    );
    try {
      await lastValueFrom(session$);
      if (stats.bytesSent !== frames.length * FRAME_100MS) failures.push(`session ${i}: sent ${stats.bytesSent}`);
    } catch (err) {
      failures.push(`session ${i}: ${String(err)}`);
    }
  };

  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  await Promise.all(Array.from({ length: SESSIONS }, (_, i) => runOne(i)));
  const wallS = (performance.now() - t0) / 1000;
  const cpu = process.cpuUsage(cpu0);
  loop.disable();
  await emu.close();

  const sorted = delays.sort((a, b) => a - b);
  const cpuS = (cpu.user + cpu.system) / 1e6;
  console.log(`concurrent: ${SESSIONS} sessions x ${SECONDS} s paced at 1x, ${ORGS} orgs x ${PER_ORG} connections, one process with the emulator`);
  console.log(machine());
  console.log(`wall ${fmt(wallS)} s, CPU ${fmt(cpuS)} s (user ${fmt(cpu.user / 1e6)}, system ${fmt(cpu.system / 1e6)}): CPU share ${fmt((100 * cpuS) / wallS)}% of one core`);
  console.log(`CPU per session-second of audio: ${fmt((1000 * cpuS) / (SESSIONS * SECONDS), 2)} ms`);
  // The histogram holds the interval between its timer's runs: the resolution is subtracted.
  const lag = (ns: number) => fmt(Math.max(0, ns / 1e6 - LOOP_RESOLUTION_MS));
  console.log(`event-loop delay p50 ${lag(loop.percentile(50))} ms, p99 ${lag(loop.percentile(99))} ms, max ${lag(loop.max)} ms`);
  console.log(`probe events ${sorted.length} of ${SESSIONS * steps.length}: delay vs audio-time schedule p50 ${fmt(percentile(sorted, 50))} ms, p99 ${fmt(percentile(sorted, 99))} ms, max ${fmt(sorted.at(-1) ?? NaN)} ms`);
  const pipeline = pipelineDelays.sort((a, b) => a - b);
  console.log(`  pipeline only (from the chunk's actual emission): p50 ${fmt(percentile(pipeline, 50))} ms, p99 ${fmt(percentile(pipeline, 99))} ms`);
  console.log(`sessions failed: ${failures.length}${failures.length ? `\n  ${failures.slice(0, 5).join('\n  ')}` : ''}`);
  if (failures.length > 0) process.exitCode = 1;
}

void main().catch((err) => {
  console.error(err);
  process.exit(1);
});
