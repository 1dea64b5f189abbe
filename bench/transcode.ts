// Throughput of transcodeSource() against bare `ffmpeg -i FILE -f s16le pipe:1`: same binary,
// same file, same output arguments. Run: npx tsx bench/transcode.ts [file] [--runs N]
import { execFile, spawn } from 'node:child_process';
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { resolveFfmpeg, transcodeSource } from '../src/index.js';

const SECONDS = 600;
const RATE = 44100;
const CHANNELS = 2;

interface Run {
  readonly bytes: number;
  readonly ms: number;
}

/** The bare command, consumed as fast as Node can: 'data' events, no processing. */
function bare(ffmpeg: string, file: string): Promise<Run> {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const child = spawn(ffmpeg, ['-hide_banner', '-loglevel', 'error', '-nostdin', '-i', file, '-map', '0:a:0', '-f', 's16le', '-ar', String(RATE), '-ac', String(CHANNELS), 'pipe:1'], { stdio: ['ignore', 'pipe', 'inherit'] });
    let bytes = 0;
    child.stdout.on('data', (b: Buffer) => (bytes += b.length));
    child.once('error', reject);
    child.once('close', (code) => (code === 0 ? resolve({ bytes, ms: performance.now() - t0 }) : reject(new Error(`ffmpeg exited ${code}`))));
  });
}

function library(ffmpeg: string, file: string): Promise<Run> {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    let bytes = 0;
    transcodeSource(file, { ffmpegPath: ffmpeg, sampleRate: RATE, channels: CHANNELS }).subscribe({
      next: (c) => (bytes += c.byteLength),
      error: reject,
      complete: () => resolve({ bytes, ms: performance.now() - t0 }),
    });
  });
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

async function benchFile(ffmpeg: string, file: string, runs: number): Promise<number> {
  const size = (await stat(file)).size;
  await bare(ffmpeg, file); // warm the page cache and the binary
  await library(ffmpeg, file);
  const b: number[] = [];
  const l: number[] = [];
  let outBytes = 0;
  for (let i = 0; i < runs; i++) {
    // Alternate so drift in machine load hits both sides alike.
    const x = await bare(ffmpeg, file);
    const y = await library(ffmpeg, file);
    if (x.bytes !== y.bytes) throw new Error(`output differs: bare ${x.bytes} bytes, library ${y.bytes} bytes`);
    outBytes = x.bytes;
    b.push(x.ms);
    l.push(y.ms);
  }
  const mbps = (ms: number) => outBytes / 1e6 / (ms / 1000);
  const audioSeconds = outBytes / (RATE * CHANNELS * 2);
  const ratio = median(b) / median(l);
  console.log(`\n${file} (${(size / 1e6).toFixed(1)} MB in, ${(outBytes / 1e6).toFixed(1)} MB s16le ${RATE} Hz x${CHANNELS} out, ${audioSeconds.toFixed(0)} s of audio), median of ${runs}`);
  console.log(`  bare ffmpeg     : ${median(b).toFixed(0).padStart(6)} ms  ${mbps(median(b)).toFixed(1).padStart(7)} MB/s  ${(audioSeconds / (median(b) / 1000)).toFixed(0)}x real time`);
  console.log(`  transcodeSource : ${median(l).toFixed(0).padStart(6)} ms  ${mbps(median(l)).toFixed(1).padStart(7)} MB/s  ${(audioSeconds / (median(l) / 1000)).toFixed(0)}x real time`);
  console.log(`  ratio (library / bare throughput): ${ratio.toFixed(3)} ${ratio >= 0.9 ? '(target >= 0.9 met)' : '(BELOW the 0.9 target)'}`);
  return ratio;
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
