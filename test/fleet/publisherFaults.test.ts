// The publisher's counts under Redis faults, against a real redis-server: paused (SIGSTOP) when
// the call ends, out of memory for a while (maxmemory with noeviction), restarted without
// persistence. After each, every entry made is in exactly one count, `published <= entries`,
// and the counts are exact against what Redis holds once it runs again: the published entries
// are stored, the unconfirmed ones may be, the others are not. `close()` keeps its one deadline
// (checked as a bound), and the event loop never stalls more than 100 ms on the library's account.
import { lastValueFrom, Subject, toArray } from 'rxjs';
import { afterEach, describe, expect, it } from 'vitest';
import { createPublisher } from '../../src/fleet/publisher.js';
import { publishSession } from '../../src/fleet/publishSession.js';
import type { PublishReport, PublishStats, Publisher } from '../../src/publishing.js';
import type { ServerEvent } from '../../src/schema/events.js';
import type { SvcError } from '../../src/errors/index.js';
import { watchLoop } from '../faults/loopStall.js';
import { settlesWithin } from '../internal/bounds.js';
import { useRedis } from './redisFixture.js';
import { startRedis } from './redisServer.js';

const fixture = useRedis();
const opened: Publisher[] = [];
afterEach(async () => {
  await Promise.allSettled(opened.splice(0).map((p) => p.close()));
});

let n = 0;
const prefix = (): string => `f${n++}`;
const topics = (i: number): ServerEvent => ({ type: 'topics', topics: [`t${i}`] });
const STALL_LIMIT_MS = 100;

/** Every entry made is in exactly one count, and nothing is counted published that was not made. */
function expectIdentity(s: Readonly<PublishStats>): void {
  expect(s.published + s.notPublished + s.unconfirmed + s.pending, JSON.stringify(s)).toBe(s.entries);
  expect(s.published).toBeLessThanOrEqual(s.entries);
}

describe('publisher under Redis faults', () => {
  it('Redis paused (SIGSTOP) when the call ends: close() keeps its deadline, and after SIGCONT the counts are exact', async () => {
    const pfx = prefix();
    const closeTimeoutMs = 1500;
    const p = await createPublisher({ url: fixture.server.url, prefix: pfx, closeTimeoutMs });
    opened.push(p);
    const s = p.session('paused');
    for (let i = 0; i < 20; i++) s.event(topics(i));
    await expect.poll(() => s.stats.pending).toBe(0);
    const loop = watchLoop();
    fixture.server.child.kill('SIGSTOP');
    let report: PublishReport;
    let closedInTime: boolean;
    try {
      // More than a batch (256): the first goes out and is never answered, the rest never leaves.
      for (let i = 20; i < 320; i++) s.event(topics(i));
      s.end({ status: 'done' });
      const closing = p.close();
      closedInTime = await settlesWithin(closing, closeTimeoutMs + 1000);
      await closing;
      report = await s.settled;
    } finally {
      fixture.server.child.kill('SIGCONT');
    }
    const stalls = loop.stop();
    // One deadline for everything, the QUIT to a Redis that cannot answer included.
    expect(closedInTime, 'close() settled within its deadline (+1 s)').toBe(true);
    expect(report).toMatchObject({ entries: 322, published: 21, unconfirmed: 256, notPublished: 45, pending: 0 });
    expectIdentity(report);
    expectIdentity(p.stats);
    expect(report.error?.code).toBe('redis_unavailable');
    // Redis runs what it was sent: the unconfirmed batch, once, and nothing that was never sent.
    await expect.poll(async () => (await fixture.stored('paused', pfx)).length, { timeout: 5000 }).toBe(report.published + report.unconfirmed);
    await fixture.admin.ping();
    const stored = await fixture.stored('paused', pfx);
    expect(stored.map((e) => e.seq)).toEqual(Array.from({ length: report.published + report.unconfirmed }, (_, i) => i + 1));
    expect(stalls.busiestMs, `the event loop stalled ${stalls.busiestMs.toFixed(0)} ms on a CPU (longest gap ${stalls.longestMs.toFixed(0)} ms)`).toBeLessThanOrEqual(STALL_LIMIT_MS);
  });

  it('Redis paused, then back before the deadline: the publisher learns what was stored, and nothing is in doubt', async () => {
    const pfx = prefix();
    const p = await createPublisher({ url: fixture.server.url, prefix: pfx, closeTimeoutMs: 4000 });
    opened.push(p);
    const s = p.session('back');
    for (let i = 0; i < 5; i++) s.event(topics(i));
    await expect.poll(() => s.stats.pending).toBe(0);
    fixture.server.child.kill('SIGSTOP');
    const resumed = setTimeout(() => fixture.server.child.kill('SIGCONT'), 800);
    try {
      for (let i = 5; i < 300; i++) s.event(topics(i));
      s.end({ status: 'done' });
      await p.close();
    } finally {
      clearTimeout(resumed);
      fixture.server.child.kill('SIGCONT');
    }
    const report = await s.settled;
    expect(report).toMatchObject({ entries: 302, published: 302, notPublished: 0, unconfirmed: 0 });
    expect((await fixture.stored('back', pfx)).map((e) => e.seq)).toEqual(Array.from({ length: 302 }, (_, i) => i + 1));
  });

  it('publishSession on its own publisher with Redis paused: the report comes within the deadline', async () => {
    const pfx = prefix();
    const closeTimeoutMs = 1000;
    const events = new Subject<ServerEvent>();
    const reports: PublishReport[] = [];
    let firstReport!: () => void;
    const reported = new Promise<void>((resolve) => (firstReport = resolve));
    const onReport = (r: PublishReport): void => {
      reports.push(r);
      firstReport();
    };
    const out = lastValueFrom(publishSession(events, { url: fixture.server.url, prefix: pfx, id: 'cli-like', closeTimeoutMs, onReport }).pipe(toArray()));
    for (let i = 0; i < 5; i++) events.next(topics(i));
    await expect.poll(async () => (await fixture.stored('cli-like', pfx)).length).toBe(6);
    fixture.server.child.kill('SIGSTOP');
    let reportedInTime: boolean;
    try {
      for (let i = 5; i < 70; i++) events.next(topics(i));
      events.complete();
      reportedInTime = await settlesWithin(reported, closeTimeoutMs + 1000);
      expect(await out).toHaveLength(70);
      await expect.poll(() => reports.length, { timeout: closeTimeoutMs + 2000, interval: 20 }).toBe(1);
    } finally {
      fixture.server.child.kill('SIGCONT');
    }
    expect(reportedInTime, 'the report came within the deadline (+1 s)').toBe(true);
    const r = reports[0]!;
    expectIdentity(r);
    expect(r.published).toBe(6);
    expect(r.unconfirmed).toBeGreaterThan(0);
    // Whatever Redis runs after SIGCONT lies within what the report allows.
    await expect.poll(async () => (await fixture.stored('cli-like', pfx)).length, { timeout: 5000 }).toBe(r.published + r.unconfirmed);
  });

  it('an out-of-memory episode (maxmemory, noeviction): one notice, one outage, everything stored once after it', async () => {
    const pfx = prefix();
    const notices: SvcError[] = [];
    const p = await createPublisher({ url: fixture.server.url, prefix: pfx, closeTimeoutMs: 3000, onRedisError: (e) => notices.push(e) });
    opened.push(p);
    const s = p.session('oom');
    for (let i = 0; i < 10; i++) s.event(topics(i));
    await expect.poll(() => s.stats.pending).toBe(0);
    const loop = watchLoop();
    await fixture.admin.config('SET', 'maxmemory-policy', 'noeviction');
    await fixture.admin.config('SET', 'maxmemory', '1');
    try {
      // Events all through the episode: each of the first five once Redis refused one more write
      // (its own count: the publisher's retries back off 50 ms, 100 ms …), the rest after them.
      const oomRefusals = async (): Promise<number> => Number(/errorstat_OOM:count=(\d+)/.exec(await fixture.admin.info('errorstats'))?.[1] ?? 0);
      for (let i = 10; i < 30; i++) {
        const before = await oomRefusals();
        s.event(topics(i));
        if (i < 15) await expect.poll(oomRefusals, { timeout: 10_000, interval: 10 }).toBeGreaterThan(before);
      }
      expect(s.stats.pending).toBeGreaterThan(0);
    } finally {
      await fixture.admin.config('SET', 'maxmemory', '0');
    }
    s.end({ status: 'done' });
    const report = await s.settled;
    const stalls = loop.stop();
    expect(notices.map((e) => e.code)).toEqual(['redis_unavailable']);
    expect(notices[0]!.message).toMatch(/OOM/);
    expect(p.stats.outages).toBe(1);
    expect(report).toMatchObject({ entries: 32, published: 32, notPublished: 0, unconfirmed: 0, outages: 1 });
    expectIdentity(report);
    const stored = await fixture.stored('oom', pfx);
    expect(stored.map((e) => e.seq)).toEqual(Array.from({ length: 32 }, (_, i) => i + 1));
    expect(stored.filter((e) => e.kind === 'event').map((e) => JSON.parse(e.data).topics[0])).toEqual(Array.from({ length: 30 }, (_, i) => `t${i}`));
    expect(stalls.busiestMs).toBeLessThanOrEqual(STALL_LIMIT_MS);
    // A session started after the outage ended reports none.
    const later = p.session('after');
    later.end({ status: 'done' });
    expect((await later.settled).outages).toBe(0);
  });

  it('Redis killed and restarted without persistence: one notice, the new start counted, the identity holds', async () => {
    const local = await startRedis();
    try {
      const pfx = prefix();
      const notices: SvcError[] = [];
      const p = await createPublisher({ url: local.url, prefix: pfx, closeTimeoutMs: 5000, onRedisError: (e) => notices.push(e) });
      opened.push(p);
      const s = p.session('restarted');
      for (let i = 0; i < 5; i++) s.event(topics(i));
      await expect.poll(() => s.stats.pending).toBe(0);
      const loop = watchLoop();
      await local.restart();
      for (let i = 5; i < 10; i++) s.event(topics(i));
      s.end({ status: 'done' });
      const report = await s.settled;
      expect(notices).toHaveLength(1);
      // 1 start, 10 events, 1 end, and the new epoch's start: 13 made, 13 stored (6 of them lost with the old Redis).
      expect(report).toMatchObject({ entries: 13, published: 13, streamsLost: 1, outages: 1 });
      expect(loop.stop().busiestMs).toBeLessThanOrEqual(STALL_LIMIT_MS);
      expectIdentity(report);
      expectIdentity(await p.close());
    } finally {
      await local.stop();
    }
  });
});
