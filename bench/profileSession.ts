// Profile the library's send path alone: `node --cpu-prof --import tsx bench/profileSession.ts [bytes] [source]`
// streams 64 MB in frames of `bytes` (default 3200) through analyzeConversation into a loopback
// sink in a child process (so its unmasking is not in the profile). `source` is pull (the bench
// pull source, default), iterable (fromAsyncIterable), readable (fromReadable) or file (fileSource).
// `--no-reconnect` runs one plain session (reconnect: false) instead of the resilient default.
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { performance } from 'node:perf_hooks';
import { lastValueFrom } from 'rxjs';
import { analyzeConversation } from '../src/session/conversation.js';
import { createSessionStats } from '../src/session/stats.js';
import { bareClient, KEY, MB, startSink } from './benchInternals.js';
import { benchFile, makeSource, type SourceKind } from './throughputSources.js';

const SCRIPT = fileURLToPath(import.meta.url);

async function main(): Promise<void> {
  const size = Number(process.argv[2] ?? 3200);
  const kind = (process.argv[3] ?? 'pull') as SourceKind;
  const child = spawn(process.execPath, ['--import', 'tsx', SCRIPT, '--sink'], { stdio: ['pipe', 'pipe', 'inherit'] });
  const port = await new Promise<number>((resolve) => child.stdout.once('data', (d: Buffer) => resolve(Number(d.toString().trim()))));
  const count = Math.round((size >= 3200 ? 64 : 8) * MB / size);
  const baseUrl = `http://127.0.0.1:${port}`;
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  if (kind === ('bare' as SourceKind)) {
    await bareClient(baseUrl, count, size);
    const secs = (performance.now() - t0) / 1000;
    const c = process.cpuUsage(c0);
    console.log(`bare ${size} B: ${((count * size) / MB / secs).toFixed(1)} MB/s, CPU ${((c.user + c.system) / 1000).toFixed(0)} ms`);
  } else {
    const file = kind === 'file' ? benchFile(count, size) : undefined;
    const src = makeSource(kind, count, size, file?.file);
    const stats = createSessionStats();
    await lastValueFrom(src.audio$.pipe(analyzeConversation({ apiKey: KEY, baseUrl, stats, ...(process.argv.includes('--no-reconnect') ? { reconnect: false as const } : {}), format: { audio_format: 's16le', sample_rate: 16000, num_channels: 1 }, ...(src.flow ? { flow: src.flow } : {}) })));
    const secs = (performance.now() - t0) / 1000;
    const c = process.cpuUsage(c0);
    file?.remove();
    console.log(`${kind} ${size} B: ${(stats.bytesSent / MB / secs).toFixed(1)} MB/s, CPU ${((c.user + c.system) / 1000).toFixed(0)} ms, ${stats.framesSent} frames for ${count} chunks, peak ${(stats.peakBufferedBytes / MB).toFixed(1)} MB buffered`);
  }
  child.stdin.end();
}

if (process.argv[2] === '--sink') {
  void startSink().then((sink) => {
    process.stdout.write(`${sink.port}\n`);
    process.stdin.resume();
    process.stdin.on('end', () => void sink.close().then(() => process.exit(0)));
  });
} else void main();
