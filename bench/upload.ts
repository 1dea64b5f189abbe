// bench/upload: does a 100 MB batch upload stay out of memory? Uploads a WAV just under
// the 100 MB limit with detectAudioEvents to an emulator in a child process (so the server's
// memory is not counted). Every 20 ms it forces a GC and samples what this process still
// holds (heap + external + array buffers): freed Buffers count as external memory until a GC,
// so peak RSS alone would also count garbage. Re-runs itself with --expose-gc.
//
//   npx tsx bench/upload.ts
import { fork } from 'node:child_process';
import { mkdtempSync, openSync, closeSync, rmSync, statSync, writeSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { detectAudioEventsAsync, MAX_UPLOAD_BYTES } from 'svc-stream/batch';
import { startEmulator } from 'svc-stream/emulator';
import { wavHeader } from './benchInternals.js';

if (process.argv[2] !== '--emulator' && typeof global.gc !== 'function') {
  // Re-run with --expose-gc so retained memory can be told from garbage.
  const again = fork(new URL(import.meta.url).pathname, process.argv.slice(2), { execArgv: ['--expose-gc', '--import', 'tsx'], stdio: 'inherit' });
  again.on('exit', (code) => process.exit(code ?? 1));
} else if (process.argv[2] === '--emulator') {
  // The child: an emulator that reports its URL and key, then waits to be killed.
  const emu = await startEmulator();
  process.send?.({ baseUrl: emu.baseUrl, apiKey: emu.apiKey });
} else {
  await measure();
}

/** A valid 16 kHz mono s16le WAV of `bytes` total size, written in 1 MiB blocks of a quiet tone. */
function writeWav(path: string, bytes: number): void {
  const dataBytes = bytes - 44;
  const header = wavHeader(dataBytes);
  const block = Buffer.alloc(1 << 20);
  for (let i = 0; i < block.length / 2; i++) block.writeInt16LE(Math.round(800 * Math.sin((2 * Math.PI * 440 * i) / 16000)), i * 2);
  const fd = openSync(path, 'w');
  writeSync(fd, header);
  let left = dataBytes;
  while (left > 0) {
    const n = Math.min(left, block.length);
    writeSync(fd, block, 0, n);
    left -= n;
  }
  closeSync(fd);
}

async function measure(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'svc-bench-upload-'));
  const file = join(dir, 'hundred-mb.wav');
  const child = fork(new URL(import.meta.url).pathname, ['--emulator'], { execArgv: ['--import', 'tsx'], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  try {
    const size = MAX_UPLOAD_BYTES - 1024;
    writeWav(file, size);
    const { baseUrl, apiKey } = await new Promise<{ baseUrl: string; apiKey: string }>((resolve) => child.once('message', (m) => resolve(m as never)));
    const retained = (): number => {
      global.gc?.();
      const m = process.memoryUsage();
      return m.heapUsed + m.external + m.arrayBuffers;
    };
    const before = process.memoryUsage();
    const baseline = retained();
    let peakRetained = baseline;
    let peakRss = before.rss;
    let samples = 0;
    const sampler = setInterval(() => {
      peakRetained = Math.max(peakRetained, retained());
      peakRss = Math.max(peakRss, process.memoryUsage().rss);
      samples++;
    }, 20);
    const t0 = performance.now();
    const result = await detectAudioEventsAsync(file, { baseUrl, apiKey });
    const ms = performance.now() - t0;
    clearInterval(sampler);
    const mb = (n: number): string => `${(n / 1048576).toFixed(1)} MB`;
    console.log(`bench/upload: ${mb(statSync(file).size)} WAV uploaded with detectAudioEvents to an emulator in a child process`);
    console.log(`machine: ${cpus().length} CPUs (${cpus()[0]?.model.trim()}), node ${process.version}, load average ${loadavg().map((l) => l.toFixed(2)).join(' ')}`);
    console.log(`result: duration_ms ${result.duration_ms}, ${Object.keys(result.probs).length} events, in ${(ms / 1000).toFixed(1)} s`);
    const growth = peakRetained - baseline;
    console.log(`client memory retained (heap + external + array buffers, after GC, ${samples} samples): peak growth ${mb(growth)} = ${((growth / size) * 100).toFixed(2)} % of the file`);
    console.log(`client RSS before ${mb(before.rss)}, peak ${mb(peakRss)} (RSS also counts freed pages the allocator keeps)`);
    const whole = growth >= size / 2;
    console.log(whole ? 'FAIL: the upload held the whole file in memory' : 'ok: the file never sat whole in memory');
    process.exitCode = whole ? 1 : 0;
  } finally {
    child.kill();
    rmSync(dir, { recursive: true, force: true });
  }
}
