// The shared limiter against a real redis-server: one limit across limiters (processes),
// organizations apart, the wait deadline, abort, release on every end, a SIGKILLed holder's
// slots coming back after the lease, and Redis going away.
import { spawn } from 'node:child_process';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { firstValueFrom, lastValueFrom, NEVER, Observable, of, throwError, toArray } from 'rxjs';
import { SvcError } from '../../src/errors/index.js';
import { createRedisLimits, type RedisLimits } from '../../src/fleet/redisLimiter.js';
import { underLimiter, type LimiterLease } from '../../src/concurrency/limiter.js';
import { cuttableProxy, startRedis, type RunningRedis } from './redisServer.js';

let redis: RunningRedis;
const opened: RedisLimits[] = [];
beforeAll(async () => {
  redis = await startRedis();
});
afterAll(async () => {
  await Promise.allSettled(opened.map((l) => l.close()));
  await redis?.stop();
});

let n = 0;
/** Fresh limits under their own key prefix, so tests do not share slots. */
async function limits(extra: Parameters<typeof createRedisLimits>[0] = {}, prefix = `t${n++}`) {
  const l = await createRedisLimits({ url: redis.url, concurrency: 3, prefix, ...extra });
  opened.push(l);
  return l;
}
const A = { model: 'audio-event', baseUrl: 'http://fleet.test', apiKey: 'org-a' };
const B = { model: 'audio-event', baseUrl: 'http://fleet.test', apiKey: 'org-b' };

async function settledWithin<T>(p: Promise<T>, ms: number): Promise<'pending' | T> {
  return Promise.race([p, new Promise<'pending'>((r) => setTimeout(() => r('pending'), ms))]);
}

describe('RedisLimiter', () => {
  it('one limit across two connections (two processes): the fourth waits until a slot is released', async () => {
    const one = await limits({}, 'shared1');
    const two = await limits({}, 'shared1');
    const leases = await Promise.all([0, 1, 2].map(() => one.limiterFor(A).acquire()));
    expect(await one.limiterFor(A).held()).toBe(3);
    const fourth = two.limiterFor(A).acquire();
    expect(await settledWithin(fourth, 200)).toBe('pending');
    leases[0]!.release();
    const l = await fourth;
    expect(await two.limiterFor(A).held()).toBe(3);
    for (const x of [...leases.slice(1), l]) x.release();
  });

  it('two organizations do not share slots; models are apart too', async () => {
    const l = await limits();
    const a = await Promise.all([0, 1, 2].map(() => l.limiterFor(A).acquire()));
    const b = await settledWithin(Promise.all([0, 1, 2].map(() => l.limiterFor(B).acquire())), 2000);
    expect(b).not.toBe('pending');
    const emotion = await settledWithin(l.limiterFor({ ...A, model: 'emotion' }).acquire(), 2000);
    expect(emotion).not.toBe('pending');
    expect(l.limiterFor(A).key).not.toBe(l.limiterFor(B).key);
    expect(l.limiterFor(A).key).not.toContain('org-a');
    for (const x of [...a, ...(b as LimiterLease[]), emotion as LimiterLease]) x.release();
  });

  it('concurrency per model', async () => {
    const l = await limits({ concurrency: { 'audio-event': 1, emotion: 2 } });
    expect(l.limiterFor(A).limit).toBe(1);
    expect(l.limiterFor({ ...A, model: 'emotion' }).limit).toBe(2);
    expect(l.limiterFor({ ...A, model: 'stt' }).limit).toBe(3);
  });

  it('the wait deadline fails with slot_timeout; an abort with aborted; neither leaks a slot', async () => {
    const l = await limits({ acquireTimeoutMs: 150 });
    const leases = await Promise.all([0, 1, 2].map(() => l.limiterFor(A).acquire()));
    const err = await l.limiterFor(A).acquire().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SvcError);
    expect((err as SvcError).code).toBe('slot_timeout');
    const ac = new AbortController();
    const waiting = l.limiterFor(A).acquire(ac.signal).catch((e: unknown) => e);
    setTimeout(() => ac.abort(), 50);
    expect(((await waiting) as SvcError).code).toBe('aborted');
    for (const x of leases) x.release();
    const again = await Promise.all([0, 1, 2].map(() => l.limiterFor(A).acquire()));
    expect(await l.limiterFor(A).held()).toBe(3);
    for (const x of again) x.release();
  });

  it('underLimiter releases on complete, error and unsubscribe', async () => {
    const l = await limits();
    const limiter = l.limiterFor(A);
    expect(await lastValueFrom(underLimiter(limiter, of(1, 2)).pipe(toArray()))).toEqual([1, 2]);
    await expect(firstValueFrom(underLimiter(limiter, throwError(() => new Error('x'))))).rejects.toThrow('x');
    let started = false;
    const sub = underLimiter(limiter, new Observable(() => { started = true; })).subscribe();
    await expect.poll(() => started).toBe(true);
    expect(await limiter.held()).toBe(1);
    sub.unsubscribe();
    // Unsubscribing while still waiting withdraws the request.
    const blockers = await Promise.all([0, 1, 2].map(() => limiter.acquire()));
    const waiting = underLimiter(limiter, NEVER).subscribe();
    await new Promise((r) => setTimeout(r, 50));
    waiting.unsubscribe();
    for (const b of blockers) b.release();
    // A waiter that was not withdrawn would take a slot at its next ask (every 50 ms): give it one.
    await new Promise((r) => setTimeout(r, 50));
    expect(await limiter.held()).toBe(0);
  });

  it("a SIGKILLed holder's slots come back once its lease expires, not before", async () => {
    const leaseMs = 1500;
    const child = spawn(process.execPath, ['--import', 'tsx', 'test/fleet/holdSlots.ts', redis.url, '3', String(leaseMs)], { stdio: ['ignore', 'pipe', 'inherit'] });
    const exited = new Promise<void>((r) => child.once('exit', () => r()));
    try {
      await new Promise<void>((resolve, reject) => {
        const t = setTimeout(() => reject(new Error('child did not take its slots')), 15_000);
        child.stdout!.on('data', (d: Buffer) => { if (d.toString().includes('held')) { clearTimeout(t); resolve(); } });
      });
      // svc-stream's default prefix and the child's organization.
      const l = await limits({ leaseMs }, 'svc-stream');
      expect(await l.limiterFor(A).held()).toBe(3);
      // Held past the lease by refreshing while alive.
      await new Promise((r) => setTimeout(r, leaseMs + 300));
      expect(await l.limiterFor(A).held()).toBe(3);
      process.kill(child.pid!, 'SIGKILL');
      await exited;
      // The dead holder's leases as Redis keeps them: member and last refresh (the limiter's clock).
      const key = `semaphore:${l.limiterFor(A).key}`;
      const raw = new Redis(redis.url);
      try {
        const scores = async () => new Map((await raw.zrange(key, '0', '-1', 'WITHSCORES')).flatMap((v, i, all) => (i % 2 === 0 ? [[v, Number(all[i + 1])] as const] : [])));
        const before = await scores();
        expect(before.size).toBe(3);
        const lease = await l.limiterFor(A).acquire();
        // Granted, and only once a dead lease had expired on the limiter's own clock: the new
        // lease is stamped at least leaseMs after the last refresh of each lease it replaced.
        const after = await scores();
        const mine = [...after.keys()].filter((m) => !before.has(m));
        const expired = [...before.keys()].filter((m) => !after.has(m));
        expect(mine).toHaveLength(1);
        expect(expired.length).toBeGreaterThanOrEqual(1);
        for (const m of expired) expect(after.get(mine[0]!)! - before.get(m)!).toBeGreaterThanOrEqual(leaseMs);
        lease.release();
      } finally {
        raw.disconnect();
      }
    } finally {
      child.kill('SIGKILL');
      await exited;
    }
  });

  it('Redis going away: acquire fails at once with redis_unavailable; a held lease is reported lost after it expires', async () => {
    const proxy = await cuttableProxy(redis.port);
    const l = await createRedisLimits({ url: proxy.url, leaseMs: 400, prefix: 'away' });
    const lease = await l.limiterFor(A).acquire();
    const lost = new Promise<unknown>((resolve) => lease.lost!.addEventListener('abort', () => resolve(lease.lost!.reason)));
    const order: string[] = [];
    void lost.then(() => order.push('lease lost'));
    await proxy.cut();
    // At once: the acquire fails before the held lease runs out (400 ms), not at its wait
    // deadline (acquireTimeoutMs, 10 minutes by default).
    const err = await l.limiterFor(A).acquire().catch((e: unknown) => e);
    order.push('acquire failed');
    expect((err as SvcError).code).toBe('redis_unavailable');
    const reason = await lost;
    expect(order).toEqual(['acquire failed', 'lease lost']);
    expect((reason as SvcError).code).toBe('lease_lost');
    lease.release();
    await l.close();
  });
});
