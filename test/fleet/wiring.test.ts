// Every place that takes a concurrency slot accepts a shared limiter: batch calls and
// tagFiles, analyzeConversation, streamJson, analyzeCalls and the CLI's --redis. Each test
// would draw refusals from the emulator if the slot were not taken from Redis.
import { PassThrough, Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { concat, from, ignoreElements, lastValueFrom, merge, mergeMap, Observable, timer, toArray } from 'rxjs';
import { analyzeConversation, streamJson, type AudioChunk } from 'svc-stream';
import { analyzeCalls } from 'svc-stream/telephony';
import { createRedisLimits, type RedisLimits } from 'svc-stream/fleet';
import { tagFiles } from 'svc-stream/batch';
import { batchCommands } from '../../src/cli/commands/batch.js';
import { audioDir, loggedEmulator, type AudioDir, type LoggedEmulator } from '../batch/fixtures.js';
import { startRedis, type RunningRedis } from './redisServer.js';

const RAW = { audio_format: 's16le', sample_rate: 16000, num_channels: 1 } as const;

let redis: RunningRedis;
let files: AudioDir;
let ten: string[];
const opened: RedisLimits[] = [];
const emus: LoggedEmulator[] = [];
beforeAll(async () => {
  redis = await startRedis();
  files = audioDir();
  ten = Array.from({ length: 10 }, (_, i) => files.tone(`w${i}.wav`, 1, 200 + i * 40));
});
afterAll(async () => {
  await Promise.allSettled(opened.map((l) => l.close()));
  await Promise.allSettled(emus.map((e) => e.close()));
  await redis?.stop();
  files?.remove();
});

let n = 0;
async function limits(concurrency: number | Record<string, number>, prefix: string): Promise<RedisLimits> {
  const l = await createRedisLimits({ url: redis.url, concurrency, prefix });
  opened.push(l);
  return l;
}
async function emulator(...args: Parameters<typeof loggedEmulator>): Promise<LoggedEmulator> {
  const e = await loggedEmulator(...args);
  emus.push(e);
  return e;
}

/** 0.6 s of silence that takes at least `ms` to arrive, so sessions overlap. */
function slowAudio(ms: number): Observable<AudioChunk> {
  const chunk = (): Uint8Array => new Uint8Array(3200);
  return concat(from([chunk(), chunk(), chunk()]), timer(ms).pipe(ignoreElements()), from([chunk(), chunk(), chunk()])) as unknown as Observable<AudioChunk>;
}

describe('batch', () => {
  it('two runs in separate limit sets (as two processes) share the organization limit: no refusal without retries', async () => {
    const emu = await emulator({ organizations: [{ keys: ['k'], concurrency: 2 }] });
    const prefix = `batch${n++}`;
    const [one, two] = [await limits(2, prefix), await limits(2, prefix)];
    // concurrency 3 locally: without the shared limiter the third upload would be refused.
    const opts = { baseUrl: emu.baseUrl, apiKey: 'k', concurrency: 3, retry: false as const };
    const out = await lastValueFrom(
      merge(from(ten.slice(0, 5)).pipe(tagFiles({ ...opts, limiter: one })), from(ten.slice(5)).pipe(tagFiles({ ...opts, limiter: two }))).pipe(toArray()),
    );
    expect(out.filter((o) => 'error' in o)).toEqual([]);
    expect(out).toHaveLength(10);
    expect(emu.accounts.find('k')!.peakInFlight['audio-event']).toBeLessThanOrEqual(2);
    expect(emu.posts('/api/svc-2-audio-event-classifier')).toBe(10);
  });

  it('svc-stream events --redis (and SVC_REDIS_URL) takes its slots from Redis', async () => {
    const emu = await emulator({ organizations: [{ keys: ['cli'], concurrency: 1 }] });
    const capture = () => {
      let text = '';
      return Object.assign(new Writable({ write(c, _e, cb) { text += String(c); cb(); } }), { text: () => text, isTTY: false });
    };
    const run = (env: NodeJS.ProcessEnv, args: string[]) => {
      const stdout = capture();
      const stderr = capture();
      const p = batchCommands.find((c) => c.name === 'events')!.run(args, { stdout, stderr, stdin: new PassThrough(), env });
      return p.then((code) => ({ code, stdout: stdout.text(), stderr: stderr.text() }));
    };
    const env = { SVC_BASE_URL: emu.baseUrl, SVC_API_KEY: 'cli' };
    const [a, b] = await Promise.all([
      run(env, ['--redis', redis.url, '--concurrency', '1', ...ten.slice(0, 3)]),
      run({ ...env, SVC_REDIS_URL: redis.url }, ['--concurrency', '1', ...ten.slice(3, 6)]),
    ]);
    // The one stderr line: the results are the emulator's stand-ins (nothing canned passes for real).
    const said = "svc-stream: source: emulator: stand-ins computed from the signal, not the service's models\n";
    expect([a.code, b.code, a.stderr, b.stderr]).toEqual([0, 0, said, said]);
    expect(emu.accounts.find('cli')!.peakInFlight['audio-event']).toBe(1);
    expect(emu.posts('/api/svc-2-audio-event-classifier')).toBe(6);
    const bad = await run(env, ['--redis', 'http://nope', ten[0]!]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('invalid_argument');
  });
});

describe('streaming', () => {
  it('analyzeConversation and streamJson hold a slot for the session: concurrency 1, two sessions each, no 4030', async () => {
    const emu = await emulator({ organizations: [{ keys: ['s'], concurrency: 1 }] });
    const prefix = `stream${n++}`;
    const [one, two] = [await limits(1, prefix), await limits(1, prefix)];
    const opts = { baseUrl: emu.baseUrl, apiKey: 's', format: RAW };
    const conv = await Promise.all([one, two].map((limiter) => lastValueFrom(slowAudio(300).pipe(analyzeConversation({ ...opts, limiter }), toArray()))));
    for (const events of conv) expect(events.at(-1)?.type).toBe('done');
    const stt = await Promise.all([one, two].map((limiter) => lastValueFrom(slowAudio(300).pipe(streamJson({ ...opts, endpoint: 'sttStreaming', limiter }), toArray()))));
    for (const frames of stt) expect(frames.at(-1)?.type).toBe('done');
    const org = emu.accounts.find('s')!;
    expect(org.peakInFlight['conversation']).toBe(1);
    expect(org.peakInFlight['stt']).toBe(1);
    expect(await one.limiterFor({ model: 'conversation', baseUrl: emu.baseUrl, apiKey: 's' }).held()).toBe(0);
  });

  it('analyzeCalls passes the limiter to every call: three calls, maxConcurrent 3, fleet limit 1', async () => {
    const emu = await emulator({ organizations: [{ keys: ['c'], concurrency: 1 }] });
    const limiter = await limits(1, `calls${n++}`);
    const calls = [0, 1, 2].map((i) => ({ id: `call-${i}`, audio$: slowAudio(200), format: RAW }));
    const outcomes = await lastValueFrom(
      analyzeCalls(from(calls), { baseUrl: emu.baseUrl, apiKey: 'c', maxConcurrent: 3, limiter }).pipe(
        mergeMap((c) => c.outcome$),
        toArray(),
      ),
    );
    expect(outcomes.map((o) => o.status)).toEqual(['done', 'done', 'done']);
    expect(emu.accounts.find('c')!.peakInFlight['conversation']).toBe(1);
  });
});
