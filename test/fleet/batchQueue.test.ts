// The distributed batch queue against a real redis-server and the emulator: worker
// processes (the CLI) share the organization's limit, survive a SIGKILLed peer and a peer
// that loses Redis, and organizations keep their own slots.
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync as readBytes } from 'node:fs';
import { PassThrough, Writable } from 'node:stream';
import { main } from '../../src/cli/main.js';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createBatchQueue, runBatchWorker, type BatchJobOutcome, type BatchQueue } from 'svc-stream/fleet';
import { audioDir, loggedEmulator, type AudioDir, type LoggedEmulator } from '../batch/fixtures.js';
import { cuttableProxy, startRedis, type RunningRedis } from './redisServer.js';

const AE = '/api/svc-2-audio-event-classifier';

let redis: RunningRedis;
let files: AudioDir;
let forty: string[];
beforeAll(async () => {
  redis = await startRedis();
  files = audioDir();
  const first = files.tone('q0.wav', 1);
  forty = [first, ...Array.from({ length: 39 }, (_, i) => files.bytes(`q${i + 1}.wav`, readBytes(first)))];
});
afterAll(async () => {
  await redis?.stop();
  files?.remove();
});


interface Proc {
  readonly child: ChildProcess;
  readonly exited: Promise<number | null>;
  stdout(): string;
  stderr(): string;
}
const procs: Proc[] = [];
const emus: LoggedEmulator[] = [];
const queues: BatchQueue[] = [];
afterEach(async () => {
  for (const p of procs) p.child.kill('SIGKILL');
  await Promise.all(procs.splice(0).map((p) => p.exited));
  await Promise.all(emus.splice(0).map((e) => e.close()));
  await Promise.allSettled(queues.splice(0).map(async (q) => { await q.obliterate(); await q.close(); }));
});

/** `svc-stream ARGS` from the sources in its own process, killed after `timeoutMs`. */
function cli(args: string[], env: NodeJS.ProcessEnv = {}, timeoutMs = 50_000): Proc {
  const child = spawn(process.execPath, ['--import', 'tsx', 'test/fleet/cli.ts', ...args], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout!.setEncoding('utf8').on('data', (c: string) => (out += c));
  child.stderr!.setEncoding('utf8').on('data', (c: string) => (err += c));
  const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
  const exited = new Promise<number | null>((r) => child.once('close', (code) => { clearTimeout(timer); r(code); }));
  const p = { child, exited, stdout: () => out, stderr: () => err };
  procs.push(p);
  return p;
}

/** `svc-stream ARGS` in this process, with captured output. */
async function inProcess(args: string[], env: NodeJS.ProcessEnv = {}, tty = false): Promise<{ code: number; stdout: string; stderr: string }> {
  let out = '';
  let err = '';
  const stdout = new Writable({ write(c, _e, cb) { out += String(c); cb(); } });
  const stderr = Object.assign(new Writable({ write(c, _e, cb) { err += String(c); cb(); } }), { isTTY: tty });
  const code = await main(args, { stdout, stderr, stdin: new PassThrough(), env });
  return { code, stdout: out, stderr: err };
}

let n = 0;
async function queue(name = `q${n++}`): Promise<BatchQueue> {
  const q = await createBatchQueue({ url: redis.url, name });
  queues.push(q);
  return q;
}
async function emulator(...args: Parameters<typeof loggedEmulator>): Promise<LoggedEmulator> {
  const e = await loggedEmulator(...args);
  emus.push(e);
  return e;
}
async function outcomes(q: BatchQueue): Promise<BatchJobOutcome[]> {
  const out: BatchJobOutcome[] = [];
  for await (const o of q.results()) out.push(o);
  return out;
}

describe('queue', () => {
  it('four worker processes complete 40 files at organization concurrency 3: no refusal, never more than 3 in flight', async () => {
    const emu = await emulator({ organizations: [{ keys: ['fleet-key'], concurrency: 3 }] });
    const name = `four${n++}`;
    const q = await queue(name);
    // Added through the CLI, worked by four CLI processes, read back through the CLI.
    const add = await inProcess(['queue', 'add', '--redis', redis.url, '--queue', name, ...forty]);
    expect(add).toMatchObject({ code: 0, stderr: `svc-stream queue: added 40 file(s) to ${name}\n` });
    expect((await q.counts()).waiting).toBe(40);
    const env = { SVC_BASE_URL: emu.baseUrl, SVC_API_KEY: 'fleet-key', SVC_REDIS_URL: redis.url };
    const workers = [0, 1, 2, 3].map(() => cli(['queue', 'work', '--queue', name, '--until-empty', '--concurrency', '3', '--org-concurrency', '3'], env));
    const codes = await Promise.all(workers.map((w) => w.exited));
    expect(codes, workers.map((w) => w.stderr()).join('\n')).toEqual([0, 0, 0, 0]);
    const results = await inProcess(['queue', 'results', '--queue', name, '--json'], { SVC_REDIS_URL: redis.url });
    expect(results.code).toBe(0);
    const lines = results.stdout.trim().split('\n').map((l) => JSON.parse(l) as BatchJobOutcome);
    expect(lines).toHaveLength(40);
    expect(lines.filter((l) => l.status !== 'done')).toEqual([]);
    expect(new Set(lines.map((l) => l.file))).toEqual(new Set(forty));
    expect(lines[0]).toMatchObject({ status: 'done', result: { duration_ms: expect.any(Number) } });
    // Every POST was answered 200: no 429 refusal was retried.
    expect(emu.posts(AE)).toBe(40);
    expect(emu.accounts.find('fleet-key')!.peakInFlight['audio-event']).toBeLessThanOrEqual(3);
    const status = await inProcess(['queue', 'status', '--redis', redis.url, '--queue', name]);
    expect(status.code).toBe(0);
    expect(JSON.parse(status.stdout)).toEqual({ waiting: 0, active: 0, delayed: 0, completed: 40, failed: 0 });
    // Each worker took part.
    for (const w of workers) expect(w.stderr()).toMatch(/this worker finished [1-9]\d* file\(s\), 0 failed/);
  }, 90_000);

  it('queue work in process: progress with counts, rate and ETA on a terminal', async () => {
    const emu = await emulator({ organizations: [{ keys: ['tty'], concurrency: 3 }] });
    const q = await queue();
    await q.add(forty.slice(0, 4));
    const env = { SVC_BASE_URL: emu.baseUrl, SVC_API_KEY: 'tty', SVC_REDIS_URL: redis.url };
    const work = await inProcess(['queue', 'work', '--queue', q.name, '--until-empty'], env, true);
    expect(work.code).toBe(0);
    expect(work.stderr).toMatch(/\[\d+\/4\] \d+ active, \d+ waiting, 0 failed · here \d+ ok 0 failed · \d+\.\d\d files\/s · ETA /);
    expect(work.stderr).toContain('this worker finished 4 file(s), 0 failed');
  });

  it('usage errors and an unreachable Redis', async () => {
    expect((await inProcess(['queue', 'add', '--redis', redis.url])).code).toBe(2);
    expect((await inProcess(['queue', 'add', '--redis', redis.url, '--model', 'stt', 'a.wav'])).code).toBe(2);
    expect((await inProcess(['queue', 'frobnicate', '--redis', redis.url])).code).toBe(2);
    expect((await inProcess(['queue', 'status', '--redis', 'http://x'])).code).toBe(2);
    const port = (await import('./redisServer.js')).freePort;
    const down = await inProcess(['queue', 'status', '--redis', `redis://127.0.0.1:${await port()}`]);
    expect(down.code).toBe(1);
    expect(down.stderr).toMatch(/^svc-stream: redis_unavailable: /);
  });

  it("a SIGKILLed worker's jobs and slots go to the others after the lock and lease expire", async () => {
    const emu = await emulator({ organizations: [{ keys: ['k2'], concurrency: 3 }] });
    const name = `kill${n++}`;
    const q = await queue(name);
    await q.add(forty.slice(0, 6));
    const env = { SVC_BASE_URL: emu.baseUrl, SVC_API_KEY: 'k2' };
    // The victim holds three jobs and three slots, and never finishes them: it is killed at once.
    const victim = runVictim(name, env);
    await victim.holding;
    process.kill(victim.proc.child.pid!, 'SIGKILL');
    // Bounded by the test's timeout, not by a clock: the survivor does all six, the victim's
    // three once their locks expire, each exactly once (the victim's requests never reached the emulator).
    const summary = await runBatchWorker({ url: redis.url, name, baseUrl: emu.baseUrl, apiKey: 'k2', untilEmpty: true, leaseMs: 1500, lockDurationMs: 1500, stalledIntervalMs: 500 });
    expect(summary).toEqual({ done: 6, failed: 0 });
    expect(emu.posts(AE)).toBe(6);
    const out = await outcomes(q);
    expect(out.filter((o) => o.status === 'done')).toHaveLength(6);
  }, 30_000);

  it('a worker that loses Redis stops with redis_unavailable; its jobs are done by another', async () => {
    const emu = await emulator({ organizations: [{ keys: ['k3'], concurrency: 3 }] });
    const name = `away${n++}`;
    const q = await queue(name);
    await q.add(forty.slice(0, 6));
    const proxy = await cuttableProxy(redis.port);
    const env = { SVC_BASE_URL: emu.baseUrl, SVC_API_KEY: 'k3' };
    const victim = runVictim(name, env, proxy.url, '1000');
    await victim.holding;
    await proxy.cut();
    const code = await victim.proc.exited;
    expect(code).toBe(1);
    expect(victim.proc.stderr()).toContain('redis_unavailable');
    const summary = await runBatchWorker({ url: redis.url, name, baseUrl: emu.baseUrl, apiKey: 'k3', untilEmpty: true, leaseMs: 1500, lockDurationMs: 1500, stalledIntervalMs: 500 });
    expect(summary.failed).toBe(0);
    const out = await outcomes(q);
    expect(out.map((o) => o.status)).toEqual(Array(6).fill('done'));
  }, 30_000);

  it('two organizations do not share slots: each runs at its own 2 at once', async () => {
    const emu = await emulator({ organizations: [{ keys: ['a'], concurrency: 2 }, { keys: ['b'], concurrency: 2 }] });
    const [qa, qb] = [await queue(), await queue()];
    await qa.add(forty.slice(0, 4));
    await qb.add(forty.slice(4, 8));
    const common = { url: redis.url, baseUrl: emu.baseUrl, untilEmpty: true, organizationConcurrency: 2, concurrency: 4 };
    const [ra, rb] = await Promise.all([runBatchWorker({ ...common, name: qa.name, apiKey: 'a' }), runBatchWorker({ ...common, name: qb.name, apiKey: 'b' })]);
    expect([ra, rb]).toEqual([{ done: 4, failed: 0 }, { done: 4, failed: 0 }]);
    expect(emu.posts(AE)).toBe(8);
    expect(emu.accounts.find('a')!.peakInFlight['audio-event']).toBeLessThanOrEqual(2);
    expect(emu.accounts.find('b')!.peakInFlight['audio-event']).toBeLessThanOrEqual(2);
  }, 30_000);
});

/**
 * A worker process whose uploads never finish (its base URL is a server that reads and never
 * answers), so it holds its jobs and slots until it dies.
 */
function runVictim(name: string, env: NodeJS.ProcessEnv, url = redis.url, redisDownMs = '15000'): { proc: Proc; holding: Promise<void> } {
  const proc = spawn(process.execPath, ['--import', 'tsx', 'test/fleet/victim.ts', url, name, redisDownMs], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let err = '';
  let out = '';
  proc.stderr!.setEncoding('utf8').on('data', (c: string) => (err += c));
  const exited = new Promise<number | null>((r) => proc.once('close', (code) => r(code)));
  const p: Proc = { child: proc, exited, stdout: () => out, stderr: () => err };
  procs.push(p);
  const holding = new Promise<void>((resolve, reject) => {
    const t = setTimeout(() => reject(new Error(`victim did not take its jobs: ${err}`)), 20_000);
    proc.stdout!.setEncoding('utf8').on('data', (c: string) => {
      out += c;
      if (out.includes('holding')) {
        clearTimeout(t);
        resolve();
      }
    });
  });
  return { proc: p, holding };
}
