// Throughput of the library against a bare ws client doing the same job (config frame,
// 100 ms frames with the same 1 MiB high-water mark, end frame, wait for done) into the same
// loopback sink, which runs in its own process so its unmasking is not charged to either.
// Prints MB/s for each and the ratio library/bare (target >= 0.9), with bufferutil and
// without (a child process with WS_NO_BUFFER_UTIL=1). The library runs twice: with a pull
// source (its flow slot pauses it) and with a plain push Observable paced by a FlowControl
// handed to analyzeConversation({ flow }) (docs/audio-sources.md).
// Run: npx tsx bench/throughput.ts
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { performance } from 'node:perf_hooks';
import { lastValueFrom, Observable } from 'rxjs';
import { FlowControl } from '../src/internal/flow.js';
import { analyzeConversation } from '../src/session/conversation.js';
import { createSessionStats } from '../src/session/stats.js';
import { bareClient, bufferUtilInUse, fmt, FRAME_100MS, KEY, machine, MB, median, pullFrames, runSelf, startSink } from './benchInternals.js';

const SCRIPT = fileURLToPath(import.meta.url);
const SIZES = [FRAME_100MS, 10 * FRAME_100MS, 100 * FRAME_100MS] as const;
const TOTAL_BYTES = 64 * MB;
const ROUNDS = 9;
const TARGET = 0.9;

interface Result {
  readonly size: number;
  readonly libMBps: number;
  /** The library fed by a push Observable that waits on a FlowControl given as `flow`. */
  readonly pushMBps: number;
  readonly bareMBps: number;
  /** Median over rounds of bare time / push-source library time. */
  readonly pushWallRatio: number;
  /** Median over rounds of bare time / library time, each round running both back to back. */
  readonly wallRatio: number;
  /** The same with this process's CPU time (user + system): steadier on a shared machine. */
  readonly cpuRatio: number;
  readonly bufferutil: boolean;
}

/** A plain push Observable (no flow slot) that checks `flow` before every frame, as documented. */
function pushFrames(count: number, size: number, flow: FlowControl): Observable<Uint8Array> {
  const frame = new Uint8Array(size);
  return new Observable<Uint8Array>((subscriber) => {
    let stopped = false;
    void (async () => {
      for (let i = 0; i < count && !stopped; i++) {
        if (flow.paused) await flow.ready();
        if (!stopped) subscriber.next(frame);
      }
      if (!stopped) subscriber.complete();
    })();
    return () => {
      stopped = true;
    };
  });
}

async function sinkProcess(): Promise<void> {
  const sink = await startSink();
  process.stdout.write(`${sink.port}\n`);
  // Lives until the parent closes our stdin.
  process.stdin.resume();
  process.stdin.on('end', () => void sink.close().then(() => process.exit(0)));
}

async function measure(): Promise<void> {
  const child = spawn(process.execPath, ['--import', 'tsx', SCRIPT, '--sink'], { stdio: ['pipe', 'pipe', 'inherit'], env: process.env });
  const port = await new Promise<number>((resolve) => child.stdout.once('data', (d: Buffer) => resolve(Number(d.toString().trim()))));
  const baseUrl = `http://127.0.0.1:${port}`;
  const results: Result[] = [];
  for (const size of SIZES) {
    const count = Math.round(TOTAL_BYTES / size);
    const bytes = count * size;
    const lib: number[] = [];
    const push: number[] = [];
    const bare: number[] = [];
    const wallRatios: number[] = [];
    const pushRatios: number[] = [];
    const cpuRatios: number[] = [];
    // Rounds alternate which goes first, so warm-up and background load hit both alike; the
    // ratio is taken per round, from two runs seconds apart.
    for (let round = 0; round < ROUNDS + 1; round++) {
      const order = round % 2 === 0 ? (['lib', 'push', 'bare'] as const) : (['bare', 'push', 'lib'] as const);
      const wall = { lib: 0, push: 0, bare: 0 };
      const cpu = { lib: 0, push: 0, bare: 0 };
      for (const which of order) {
        const c0 = process.cpuUsage();
        const t0 = performance.now();
        if (which === 'lib') {
          const stats = createSessionStats();
          const done = await lastValueFrom(pullFrames(count, size).pipe(analyzeConversation({ apiKey: KEY, baseUrl, stats })));
          if (stats.bytesSent !== bytes || done.type !== 'done' || done.duration_ms !== Math.round(bytes / 32)) throw new Error(`library run lost bytes: sent ${stats.bytesSent} of ${bytes}`);
        } else if (which === 'push') {
          const stats = createSessionStats();
          const flow = new FlowControl();
          const format = { audio_format: 's16le', sample_rate: 16000, num_channels: 1 } as const;
          const done = await lastValueFrom(pushFrames(count, size, flow).pipe(analyzeConversation({ apiKey: KEY, baseUrl, stats, flow, format })));
          if (stats.bytesSent !== bytes || done.type !== 'done') throw new Error(`push run lost bytes: sent ${stats.bytesSent} of ${bytes}`);
        } else {
          await bareClient(baseUrl, count, size);
        }
        wall[which] = (performance.now() - t0) / 1000;
        const c = process.cpuUsage(c0);
        cpu[which] = (c.user + c.system) / 1e6;
      }
      if (round === 0) continue; // warm-up
      lib.push(bytes / MB / wall.lib);
      push.push(bytes / MB / wall.push);
      bare.push(bytes / MB / wall.bare);
      wallRatios.push(wall.bare / wall.lib);
      pushRatios.push(wall.bare / wall.push);
      cpuRatios.push(cpu.bare / cpu.lib);
    }
    results.push({ size, libMBps: median(lib), pushMBps: median(push), bareMBps: median(bare), pushWallRatio: median(pushRatios), wallRatio: median(wallRatios), cpuRatio: median(cpuRatios), bufferutil: bufferUtilInUse() });
  }
  child.stdin.end();
  process.stdout.write(JSON.stringify(results) + '\n');
}

async function main(): Promise<void> {
  console.log(`throughput: library vs bare ws client, ${TOTAL_BYTES / MB} MB per run, medians of ${ROUNDS} rounds; ratio = library speed / bare speed, per round`);
  console.log(machine());
  let worst = Infinity;
  for (const [label, env] of [
    ['bufferutil on', {}],
    ['bufferutil off (WS_NO_BUFFER_UTIL=1)', { WS_NO_BUFFER_UTIL: '1' }],
  ] as const) {
    const results = JSON.parse(await runSelf(SCRIPT, ['--measure'], env)) as Result[];
    console.log(`\n${label} (ws masks with bufferutil: ${results[0]!.bufferutil})`);
    console.log('frame bytes   library MB/s   bare ws MB/s   ratio (wall)   ratio (CPU)   push+flow MB/s   push ratio (wall)');
    for (const r of results) {
      worst = Math.min(worst, r.wallRatio);
      console.log(`${String(r.size).padStart(11)}   ${fmt(r.libMBps).padStart(12)}   ${fmt(r.bareMBps).padStart(12)}   ${fmt(r.wallRatio, 2).padStart(12)}   ${fmt(r.cpuRatio, 2).padStart(11)}   ${fmt(r.pushMBps).padStart(14)}   ${fmt(r.pushWallRatio, 2).padStart(17)}`);
    }
  }
  console.log(`\nworst ratio ${fmt(worst, 2)} (target >= ${TARGET}): ${worst >= TARGET ? 'ok' : 'BELOW TARGET'}`);
}

const mode = process.argv[2];
if (mode === '--sink') void sinkProcess();
else if (mode === '--measure') void measure().catch((err) => {
  console.error(err);
  process.exit(1);
});
else void main().catch((err) => {
  console.error(err);
  process.exit(1);
});
