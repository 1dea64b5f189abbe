// The publisher against a real redis-server: a session's entries in its stream with the ids it
// chose, the directory, trimming by age, a reply lost mid-write stored once, a stream lost with
// a restarted Redis continued in a new epoch, an id taken over, and Redis gone mid-call (the
// call completes, what was not published is counted).
import { Redis } from 'ioredis';
import { from, lastValueFrom, Subject, toArray } from 'rxjs';
import type { SessionState } from '../../src/schema/sessionState.js';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { ServerEvent } from '../../src/schema/events.js';
import { createPublisher } from '../../src/fleet/publisher.js';
import type { Publisher, PublishReport } from '../../src/publishing.js';
import { publishSession } from '../../src/fleet/publishSession.js';
import { decodeDirectoryEntry, decodeEntry, fleetKeys, type StreamEntry } from '../../src/fleet/streamEntries.js';
import { cuttableProxy, startRedis, type RunningRedis } from './redisServer.js';

let redis: RunningRedis;
let admin: Redis;
const opened: Publisher[] = [];
beforeAll(async () => {
  // Small stream nodes, so trimming by MINID (~) takes whole nodes of a few entries.
  redis = await startRedis(['--stream-node-max-entries', '4']);
  admin = new Redis(redis.url, { lazyConnect: true });
  await admin.connect();
});
afterEach(async () => {
  await Promise.allSettled(opened.splice(0).map((p) => p.close()));
});
afterAll(async () => {
  admin?.disconnect();
  await redis?.stop();
});

let n = 0;
const prefix = (): string => `p${n++}`;
const topics = (i: number): ServerEvent => ({ type: 'topics', topics: [`t${i}`] });

async function publisher(options: Parameters<typeof createPublisher>[0] = {}): Promise<Publisher> {
  const p = await createPublisher({ url: redis.url, closeTimeoutMs: 2000, ...options });
  opened.push(p);
  return p;
}

async function entries(pfx: string, id: string): Promise<StreamEntry[]> {
  const rows = (await admin.xrange(fleetKeys(pfx).stream(id), '-', '+')) as [string, string[]][];
  return rows.map(([rid, fields]) => decodeEntry(rid, fields)!);
}

async function settle(report: Promise<PublishReport>): Promise<PublishReport> {
  return report;
}

describe('publisher', () => {
  it("appends a session's start, events, statuses and end with ids MS-SEQ, and notes it in the directory", async () => {
    const pfx = prefix();
    const p = await publisher({ prefix: pfx });
    const s = p.session('call-1', { title: 'call one.wav' });
    // Its life cycle, as a session's stats.state$ gives it: paused (flow control) reads streaming.
    s.follow(from<SessionState[]>([{ status: 'connecting' }, { status: 'streaming' }, { status: 'paused' }, { status: 'streaming' }]));
    for (let i = 0; i < 5; i++) s.event(topics(i));
    s.end({ status: 'done' });
    const report = await settle(s.settled);
    expect(report).toMatchObject({ id: 'call-1', entries: 9, published: 9, notPublished: 0, pending: 0 });
    const stored = await entries(pfx, 'call-1');
    expect(stored.map((e) => e.kind)).toEqual(['start', 'status', 'status', 'event', 'event', 'event', 'event', 'event', 'end']);
    expect(stored.filter((e) => e.kind === 'status').map((e) => JSON.parse(e.data).status)).toEqual(['connecting', 'streaming']);
    expect(stored.map((e) => e.seq)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9]);
    expect(new Set(stored.map((e) => e.epoch)).size).toBe(1);
    expect(JSON.parse(stored[0]!.data)).toMatchObject({ title: 'call one.wav' });
    expect(JSON.parse(stored[3]!.data)).toEqual({ type: 'topics', topics: ['t0'] });
    expect(JSON.parse(stored[8]!.data)).toEqual({ status: 'done' });
    const dir = ((await admin.xrange(fleetKeys(pfx).directory, '-', '+')) as [string, string[]][]).map(([id, f]) => decodeDirectoryEntry(id, f)!);
    expect(dir.map((d) => [d.session, d.kind, d.info.status])).toEqual([
      ['call-1', 'start', 'connecting'],
      ['call-1', 'status', 'connecting'],
      ['call-1', 'status', 'streaming'],
      ['call-1', 'end', 'done'],
    ]);
    expect(dir.at(-1)!.info.events).toBe(5);
    // The keys expire after the retention once nothing is written.
    expect(await admin.pttl(fleetKeys(pfx).stream('call-1'))).toBeGreaterThan(3_000_000);
  });

  it('closed at once after publishing (a short command): waits for Redis, and everything is stored', async () => {
    const pfx = prefix();
    const p = await createPublisher({ url: redis.url, prefix: pfx });
    const s = p.session('quick');
    for (let i = 0; i < 50; i++) s.event(topics(i));
    s.end({ status: 'done' });
    expect(await p.close()).toMatchObject({ entries: 52, published: 52, notPublished: 0 });
    expect(await entries(pfx, 'quick')).toHaveLength(52);
  });

  it('trims entries older than the retention (MINID, on its own clock)', async () => {
    const pfx = prefix();
    let now = 1_000_000;
    const p = await publisher({ prefix: pfx, retentionMs: 10_000, now: () => now });
    const s = p.session('long');
    for (let i = 0; i < 40; i++) {
      s.event(topics(i));
      now += 1000;
      if (i % 10 === 9) await expect.poll(() => s.stats.pending).toBe(0);
    }
    s.end({ status: 'done' });
    await s.settled;
    const kept = await entries(pfx, 'long');
    // Whole nodes of four go once they are older than 10 s: what is left starts at most a node before the threshold.
    expect(kept.at(-1)!.kind).toBe('end');
    expect(kept[0]!.ms).toBeGreaterThanOrEqual(now - 10_000 - 4_000);
    expect(kept.length).toBeLessThan(20);
    // What is kept is contiguous: the seq numbers say nothing in between was lost.
    expect(kept.map((e) => e.seq)).toEqual(kept.map((_, i) => kept[0]!.seq + i));
  });

  it('a reply lost after Redis stored the batch: the retry is stored once (ids chosen by the publisher)', async () => {
    const pfx = prefix();
    const proxy = await cuttableProxy(redis.port);
    const outages: string[] = [];
    const p = await publisher({ prefix: pfx, url: proxy.url, onRedisError: (e) => outages.push(e.code) });
    const s = p.session('blip');
    for (let i = 0; i < 10; i++) s.event(topics(i));
    await expect.poll(() => s.stats.pending).toBe(0);
    const lost = proxy.loseNextReply();
    for (let i = 10; i < 20; i++) s.event(topics(i));
    await lost;
    for (let i = 20; i < 30; i++) s.event(topics(i));
    s.end({ status: 'done' });
    const report = await s.settled;
    expect(report).toMatchObject({ entries: 32, published: 32, notPublished: 0 });
    expect(p.stats.outages).toBeGreaterThanOrEqual(1);
    expect(outages[0]).toBe('redis_unavailable');
    const stored = await entries(pfx, 'blip');
    expect(stored.map((e) => e.seq)).toEqual(Array.from({ length: 32 }, (_, i) => i + 1));
    expect(stored.filter((e) => e.kind === 'event').map((e) => JSON.parse(e.data).topics[0])).toEqual(Array.from({ length: 30 }, (_, i) => `t${i}`));
    await proxy.cut();
  });

  it('a stream lost with Redis (restarted without persistence) goes on in a new epoch that says so', async () => {
    const local = await startRedis();
    try {
      const pfx = prefix();
      const p = await createPublisher({ url: local.url, prefix: pfx, closeTimeoutMs: 5000 });
      const s = p.session('call');
      for (let i = 0; i < 5; i++) s.event(topics(i));
      await expect.poll(() => s.stats.pending).toBe(0);
      const before = new Redis(local.url);
      const firstEpoch = (await before.xrange(fleetKeys(pfx).stream('call'), '-', '+')) as [string, string[]][];
      before.disconnect();
      await local.restart();
      for (let i = 5; i < 10; i++) s.event(topics(i));
      s.end({ status: 'done' });
      const report = await s.settled;
      await p.close();
      expect(report).toMatchObject({ streamsLost: 1, notPublished: 0 });
      const c = new Redis(local.url);
      const rows = (await c.xrange(fleetKeys(pfx).stream('call'), '-', '+')) as [string, string[]][];
      c.disconnect();
      const after = rows.map(([id, f]) => decodeEntry(id, f)!);
      expect(after[0]).toMatchObject({ kind: 'start', seq: 1 });
      expect(JSON.parse(after[0]!.data)).toMatchObject({ restarted: true });
      expect(after[0]!.epoch).not.toBe(decodeEntry(firstEpoch[0]![0], firstEpoch[0]![1])!.epoch);
      expect(after.filter((e) => e.kind === 'event').map((e) => JSON.parse(e.data).topics[0])).toEqual(['t5', 't6', 't7', 't8', 't9']);
      expect(after.at(-1)!.kind).toBe('end');
    } finally {
      await local.stop();
    }
  });

  it('a new run of the same id replaces the stream; the old run, still writing, is refused and says why', async () => {
    const pfx = prefix();
    const a = await publisher({ prefix: pfx });
    const b = await publisher({ prefix: pfx });
    const old = a.session('dup');
    old.event(topics(1));
    await expect.poll(() => old.stats.pending).toBe(0);
    const fresh = b.session('dup');
    fresh.event(topics(2));
    await expect.poll(() => fresh.stats.pending).toBe(0);
    old.event(topics(3));
    old.end({ status: 'done' });
    const report = await old.settled;
    expect(report.notPublished).toBe(2);
    expect(report.error?.message).toMatch(/taken over by another publisher/);
    const stored = await entries(pfx, 'dup');
    expect(stored.map((e) => e.kind)).toEqual(['start', 'event']);
    expect(JSON.parse(stored[1]!.data).topics).toEqual(['t2']);
  });

  it('Redis gone mid-call: the call completes untouched, and what was not published is counted and said', async () => {
    const pfx = prefix();
    const proxy = await cuttableProxy(redis.port);
    const events = new Subject<ServerEvent>();
    const reports: PublishReport[] = [];
    const out = lastValueFrom(publishSession(events, { url: proxy.url, prefix: pfx, id: 'cut', closeTimeoutMs: 300, onReport: (r) => reports.push(r) }).pipe(toArray()));
    for (let i = 0; i < 5; i++) events.next(topics(i));
    await expect.poll(async () => (await entries(pfx, 'cut')).length).toBe(6);
    await proxy.cut();
    for (let i = 5; i < 12; i++) events.next(topics(i));
    events.complete();
    // The session's own events, all of them, in order: publishing took nothing away.
    expect((await out).map((e) => (e.type === 'topics' ? e.topics[0] : e.type))).toEqual(Array.from({ length: 12 }, (_, i) => `t${i}`));
    await expect.poll(() => reports.length, { timeout: 5000 }).toBe(1);
    // A batch written as the connection went may have reached Redis or not: unconfirmed, not lost.
    expect(reports[0]).toMatchObject({ id: 'cut', entries: 14, published: 6, pending: 0 });
    expect(reports[0]!.notPublished + reports[0]!.unconfirmed).toBe(8);
    expect(reports[0]!.error?.code).toBe('redis_unavailable');
  });

  it('without Redis at all the session runs, and the report counts every entry unpublished', async () => {
    let reported: PublishReport | undefined;
    const got = await lastValueFrom(
      publishSession(from([topics(1), topics(2)]), { url: 'redis://127.0.0.1:9', id: 'nowhere', closeTimeoutMs: 200, onReport: (r) => void (reported = r) }).pipe(toArray()),
    );
    expect(got).toHaveLength(2);
    await expect.poll(() => reported, { timeout: 5000 }).toBeDefined();
    expect(reported).toMatchObject({ entries: 4, published: 0, notPublished: 4 });
  });

  it('refuses a bad id, a bad URL and a bad option before anything is sent', async () => {
    await expect(createPublisher({ url: 'http://x' })).rejects.toMatchObject({ code: 'invalid_argument' });
    await expect(createPublisher({ url: redis.url, retentionMs: 0 })).rejects.toMatchObject({ code: 'invalid_argument' });
    const p = await publisher();
    expect(() => p.session('a b')).toThrow(expect.objectContaining({ code: 'invalid_argument' }));
    p.session('twice');
    expect(() => p.session('twice')).toThrow(/already being published/);
    await expect(lastValueFrom(publishSession(from([topics(1)]), { url: redis.url, id: '' }))).rejects.toMatchObject({ code: 'invalid_argument' });
  });
});
