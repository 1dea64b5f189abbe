// Files per second through the distributed batch queue: 1, 2 and 4 worker processes against
// the emulator at organization concurrency 3 and 25, with a real redis-server.
//   npx tsx bench/fleet.ts [FILES]
// Workers are started and connected before the files are added, so process start-up is not
// counted; the clock runs from the add to the last completed job.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { copyFileSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { createBatchQueue } from '../src/fleet/batchQueue.js';
import { startEmulator } from '../src/emulator/index.js';
import { startRedis } from '../test/fleet/redisServer.js';

const FILES = Number(process.argv[2] ?? 60);
const dir = mkdtempSync(join(os.tmpdir(), 'svc-fleet-bench-'));
execFileSync('/usr/bin/ffmpeg', ['-v', 'error', '-y', '-f', 'lavfi', '-i', 'sine=frequency=440:duration=1', '-ar', '16000', '-ac', '1', join(dir, 'f0.wav')]);
const files = Array.from({ length: FILES }, (_, i) => {
  const p = join(dir, `f${i}.wav`);
  if (i > 0) copyFileSync(join(dir, 'f0.wav'), p);
  return p;
});

const redis = await startRedis();
const rows: string[] = [];
let run = 0;
try {
  for (const concurrency of [3, 25]) {
    for (const workers of [1, 2, 4]) {
      const key = `bench-${concurrency}-${workers}`;
      const emu = await startEmulator({ organizations: [{ keys: [key], concurrency }] });
      const name = `bench${run++}`;
      const queue = await createBatchQueue({ url: redis.url, name });
      const env = { ...process.env, SVC_BASE_URL: emu.baseUrl, SVC_API_KEY: key, SVC_REDIS_URL: redis.url };
      const procs: ChildProcess[] = [];
      for (let i = 0; i < workers; i++) {
        procs.push(spawn(process.execPath, ['--import', 'tsx', 'test/fleet/cli.ts', 'queue', 'work', '--queue', name, '--org-concurrency', String(concurrency)], { env, stdio: 'ignore' }));
      }
      const exited = procs.map((p) => new Promise<void>((r) => p.once('exit', () => r())));
      // Wait until every worker is connected to the queue.
      const { Queue } = await import('bullmq');
      const probe = new Queue(name, { connection: { url: redis.url } });
      while ((await probe.getWorkersCount()) < workers) await new Promise((r) => setTimeout(r, 100));
      await probe.close();
      const t0 = performance.now();
      await queue.add(files);
      let counts = await queue.counts();
      while (counts.completed + counts.failed < FILES) {
        await new Promise((r) => setTimeout(r, 50));
        counts = await queue.counts();
      }
      const seconds = (performance.now() - t0) / 1000;
      for (const p of procs) p.kill('SIGTERM');
      await Promise.all(exited);
      const org = emu.accounts.find(key)!;
      rows.push(`| ${concurrency} | ${workers} | ${(FILES / seconds).toFixed(1)} | ${seconds.toFixed(1)} s | ${org.peakInFlight['audio-event']} | ${counts.failed} |`);
      console.log(rows.at(-1));
      await queue.obliterate();
      await queue.close();
      await emu.close();
    }
  }
} finally {
  await redis.stop();
  rmSync(dir, { recursive: true, force: true });
}
console.log(`\n${FILES} files (1 s WAV, audio-event) per run; ${os.cpus().length} cores, load average ${os.loadavg().map((l) => l.toFixed(1)).join(' ')}`);
console.log('| org concurrency | workers | files/s | wall | peak in flight (emulator) | failed |');
console.log('|---|---|---|---|---|---|');
for (const r of rows) console.log(r);
