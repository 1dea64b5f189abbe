// Throughput of the library's transcoding against two baselines, same binary, same file, same
// output arguments: bare `ffmpeg -i FILE -f s16le /dev/null` (no pipe at all) and the same
// command piped into Node ('data' events, no processing). Every variant runs once per round,
// rounds interleaved, so drift in machine load hits all alike.
// Run: npx tsx bench/transcode.ts [file] [--runs N]
import { execFile, spawn } from 'node:child_process';
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { fileSource, probeAudioFile, resolveFfmpeg, transcodeSource } from '../src/index.js';

const SECONDS = 600;
const RATE = 44100;
const CHANNELS = 2;

interface Run {
  readonly bytes: number;
  readonly ms: number;
}

const outputArgs = ['-map', '0:a:0', '-f', 's16le', '-ar', String(RATE), '-ac', String(CHANNELS)];

/** Baseline 1: ffmpeg decoding to /dev/null, nothing read by anyone. Output size from the file length. */
function devnull(ffmpeg: string, file: string, bytes: number): Promise<Run> {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const child = spawn(ffmpeg, ['-hide_banner', '-loglevel', 'error', '-nostdin', '-i', file, ...outputArgs, '-y', '/dev/null'], { stdio: ['ignore', 'ignore', 'inherit'] });
    child.once('error', reject);
    child.once('close', (code) => (code === 0 ? resolve({ bytes, ms: performance.now() - t0 }) : reject(new Error(`ffmpeg exited ${code}`))));
  });
}

/** Baseline 2: the plain command piped into Node, consumed as fast as Node can ('data' events). */
function piped(ffmpeg: string, file: string): Promise<Run> {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const child = spawn(ffmpeg, ['-hide_banner', '-loglevel', 'error', '-nostdin', '-i', file, ...outputArgs, 'pipe:1'], { stdio: ['ignore', 'pipe', 'inherit'] });
    let bytes = 0;
    child.stdout.on('data', (b: Buffer) => (bytes += b.length));
    child.once('error', reject);
    child.once('close', (code) => (code === 0 ? resolve({ bytes, ms: performance.now() - t0 }) : reject(new Error(`ffmpeg exited ${code}`))));
  });
}

function consume(source: ReturnType<typeof transcodeSource>): Promise<Run> {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    let bytes = 0;
    source.subscribe({
      next: (c) => (bytes += c.byteLength),
      error: reject,
      complete: () => resolve({ bytes, ms: performance.now() - t0 }),
    });
  });
}

const target = { sampleRate: RATE, channels: CHANNELS } as const;
const variants: Record<string, (ffmpeg: string, file: string, bytes: number) => Promise<Run>> = {
  'ffmpeg > /dev/null': devnull,
  'ffmpeg | node': (ffmpeg, file) => piped(ffmpeg, file),
  'transcodeSource': (ffmpeg, file) => consume(transcodeSource(file, { ffmpegPath: ffmpeg, ...target })),
  // What fileSource does now: one ffmpeg, which is also the decode check.
  'fileSource (transcode)': (ffmpeg, file) => consume(fileSource(file, { ffmpegPath: ffmpeg, transcode: target })),
  // What fileSource did before: a separate decode probe, then the transcoder.
  'probe + transcodeSource': async (ffmpeg, file) => {
    const t0 = performance.now();
    await probeAudioFile(file, { ffmpegPath: ffmpeg, transcoding: true });
    const run = await consume(transcodeSource(file, { ffmpegPath: ffmpeg, ...target }));
    return { bytes: run.bytes, ms: performance.now() - t0 };
  },
};

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

async function benchFile(ffmpeg: string, file: string, runs: number): Promise<void> {
  const size = (await stat(file)).size;
  const outBytes = (await piped(ffmpeg, file)).bytes; // also warms the page cache and the binary
  const times = new Map<string, number[]>(Object.keys(variants).map((name) => [name, []]));
  // CPU time of this Node process per run: what reading ffmpeg's output costs on our side
  // (ffmpeg's own CPU is not in it), steadier than wall time on a loaded machine.
  const cpu = new Map<string, number[]>(Object.keys(variants).map((name) => [name, []]));
  for (const run of Object.values(variants)) await run(ffmpeg, file, outBytes); // warm-up
  for (let i = 0; i < runs; i++) {
    for (const [name, run] of Object.entries(variants)) {
      const c0 = process.cpuUsage();
      const r = await run(ffmpeg, file, outBytes);
      const c = process.cpuUsage(c0);
      cpu.get(name)!.push((c.user + c.system) / 1000);
      if (r.bytes !== outBytes) throw new Error(`${name}: output differs: ${r.bytes} bytes, expected ${outBytes}`);
      times.get(name)!.push(r.ms);
    }
  }
  const mbps = (ms: number) => outBytes / 1e6 / (ms / 1000);
  const audioSeconds = outBytes / (RATE * CHANNELS * 2);
  const base = median(times.get('ffmpeg > /dev/null')!);
  const pipe = median(times.get('ffmpeg | node')!);
  console.log(`\n${file} (${(size / 1e6).toFixed(1)} MB in, ${(outBytes / 1e6).toFixed(1)} MB s16le ${RATE} Hz x${CHANNELS} out, ${audioSeconds.toFixed(0)} s of audio), median of ${runs} interleaved rounds, load average ${loadavg().map((l) => l.toFixed(2)).join(' ')}`);
  console.log(`  ${'variant'.padEnd(24)} ${'ms'.padStart(6)} ${'MB/s'.padStart(7)}  ${'x real time'.padStart(11)}  vs /dev/null  vs ffmpeg|node  node CPU ms`);
  for (const [name, ts] of times) {
    const ms = median(ts);
    console.log(`  ${name.padEnd(24)} ${ms.toFixed(0).padStart(6)} ${mbps(ms).toFixed(1).padStart(7)}  ${(audioSeconds / (ms / 1000)).toFixed(0).padStart(10)}x  ${(base / ms).toFixed(3).padStart(11)}  ${(pipe / ms).toFixed(3).padStart(12)}  ${median(cpu.get(name)!).toFixed(0).padStart(11)}`);
  }
}

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const runsAt = args.indexOf('--runs');
  const runs = runsAt >= 0 ? Number(args[runsAt + 1]) : 5;
  const given = args.find((a, i) => !a.startsWith('--') && args[i - 1] !== '--runs');
  const ffmpeg = await resolveFfmpeg();
  console.log(`ffmpeg: ${ffmpeg.path} (${ffmpeg.source})\n${ffmpeg.version}`);

  if (given) {
    await benchFile(ffmpeg.path, given, runs);
    return;
  }
  const dir = await mkdtemp(join(tmpdir(), 'svc-bench-'));
  try {
    // The sine source is cheap to generate (aevalsrc takes minutes for ten of them).
    const signal = `sine=frequency=220:beep_factor=4:sample_rate=${RATE}:duration=${SECONDS}`;
    const make = (name: string, codec: string[]) =>
      promisify(execFile)(ffmpeg.path, ['-hide_banner', '-loglevel', 'error', '-nostdin', '-y', '-f', 'lavfi', '-i', signal, '-ac', String(CHANNELS), ...codec, join(dir, name)]);
    console.log(`generating ${SECONDS / 60}-minute files in ${dir} …`);
    await Promise.all([make('ten-minutes.mp3', ['-c:a', 'libmp3lame', '-b:a', '128k']), make('ten-minutes.wav', ['-c:a', 'pcm_s16le'])]);
    // MP3: decoding dominates. WAV: almost no decoding, so this measures the pipe and our overhead.
    await benchFile(ffmpeg.path, join(dir, 'ten-minutes.mp3'), runs);
    await benchFile(ffmpeg.path, join(dir, 'ten-minutes.wav'), runs);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
