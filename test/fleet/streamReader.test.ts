// The fleet reader against a real redis-server: the directory read at start and kept live
// (start, status, end, stale by its own clock), and one blocking read for every followed
// stream, whatever the number of followers.
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPublisher } from '../../src/fleet/publisher.js';
import type { Publisher } from '../../src/publishing.js';
import { openFleetReader, type FleetReader } from '../../src/fleet/streamReader.js';
import type { FollowSink } from '../../src/fleet/StreamFollower.js';
import type { StreamEntry } from '../../src/fleet/streamEntries.js';
import { startRedis, type RunningRedis } from './redisServer.js';

let redis: RunningRedis;
beforeAll(async () => {
  redis = await startRedis();
});
afterAll(async () => {
  await redis?.stop();
});

const collect = (): FollowSink & { entries: StreamEntry[] } => {
  const entries: StreamEntry[] = [];
  return { entries, entry: (e) => (entries.push(e), true) };
};

describe('fleet reader', () => {
  it('reads the directory that was there before it, follows its changes, and says stale by its own clock', async () => {
    const prefix = 'dir';
    const publisher: Publisher = await createPublisher({ url: redis.url, prefix });
    let reader: FleetReader | undefined;
    try {
      const before = publisher.session('early', { title: 'early.wav' });
      before.end({ status: 'done' });
      await before.settled;
      // The reader's clock, moved by hand, starts at Redis's (the directory's entry ids are Redis's time).
      const admin = new Redis(redis.url);
      const [seconds, micros] = await admin.time();
      admin.disconnect();
      let now = Number(seconds) * 1000 + Math.floor(Number(micros) / 1000);
      reader = await openFleetReader({ url: redis.url, prefix, staleMs: 60_000, now: () => now });
      expect(reader.session('early')).toMatchObject({ title: 'early.wav', status: 'done', ended: true });
      const changed: string[] = [];
      reader.changes$.subscribe((id) => changed.push(id));
      const live = publisher.session('live');
      live.status('streaming');
      await expect.poll(() => reader!.session('live')?.status, { timeout: 10_000 }).toBe('streaming');
      expect(changed).toContain('live');
      expect(reader.isStale(reader.session('live')!)).toBe(false);
      now += 61_000; // the publisher went quiet (its alive notes come every 15 s)
      expect(reader.isStale(reader.session('live')!)).toBe(true);
      expect(reader.sessions().map((s) => s.id)).toEqual(['early', 'live']);
    } finally {
      await reader?.close();
      await publisher.close();
    }
  });

  it('one blocking read serves every followed stream; a stream followed by many is read once', async () => {
    const prefix = 'many';
    const publisher = await createPublisher({ url: redis.url, prefix });
    const reader = await openFleetReader({ url: redis.url, prefix });
    try {
      const sessions = ['a', 'b', 'c'].map((id) => publisher.session(id));
      const sinks = Array.from({ length: 9 }, collect);
      // A session is joined once Redis has it (its start is written before the directory's note).
      await expect.poll(() => ['a', 'b', 'c'].every((id) => reader.session(id) !== undefined), { timeout: 10_000 }).toBe(true);
      for (const joined of await Promise.all(sinks.map((sink, i) => reader.follow(['a', 'b', 'c'][i % 3]!, undefined, sink)))) {
        if (joined.kind !== 'follow') throw new Error(`not followed: ${joined.kind}`);
        joined.follower.start();
      }
      expect(reader.stats.streams).toBe(3);
      for (let k = 0; k < 20; k++) for (const s of sessions) s.event({ type: 'topics', topics: [`${k}`] });
      for (const s of sessions) s.end({ status: 'done' });
      await expect.poll(() => sinks.every((s) => s.entries.at(-1)?.kind === 'end'), { timeout: 10_000 }).toBe(true);
      for (const sink of sinks) expect(sink.entries.map((e) => e.seq)).toEqual(Array.from({ length: 22 }, (_, i) => i + 1));
    } finally {
      await reader.close();
      await publisher.close();
    }
  });
});
