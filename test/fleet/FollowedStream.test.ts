// A followed stream's tail against a real redis-server: the newest entries read first with
// the floor below them, bounded as the blocking read appends, read afresh when replaced.
import { describe, expect, it } from 'vitest';
import { FollowedStream, type TailFollower } from '../../src/fleet/FollowedStream.js';
import { addEntry, recordingHost, redisForFile } from './followedStreamHost.js';

const redis = redisForFile();

const follower = (): TailFollower & { pumps: number; restarts: number } => {
  const f = { pumps: 0, restarts: 0, pump: () => void f.pumps++, restartFromStart: () => void f.restarts++ };
  return f;
};

describe('FollowedStream', () => {
  it('reads the newest entries, the oldest read becoming the floor, and wakes the reader', async () => {
    for (let seq = 1; seq <= 5; seq++) await addEntry(redis.cmd, 'fs:a', 10, seq, 'E', seq === 1 ? 'start' : 'event');
    const host = recordingHost(redis.cmd, 3);
    const stream = new FollowedStream(host, 'a', 'fs:a');
    await stream.init();
    expect(stream.tail.map((e) => e.seq)).toEqual([4, 5]);
    expect(stream.floor).toMatchObject({ ms: 10, seq: 3 });
    expect(stream.lastId).toBe('10-5');
    expect(stream.epoch).toBe('E');
    expect(host.woken).toBe(1);
    expect(stream.indexAfter({ ms: 10, seq: 2 })).toBeUndefined();
    expect(stream.indexAfter({ ms: 10, seq: 3 })).toBe(0);
    expect(stream.indexAfter({ ms: 10, seq: 5 })).toBe(2);
  });

  it('what the blocking read brings is appended within the bound, the floor rising, and each follower pumped', async () => {
    const host = recordingHost(redis.cmd, 2);
    const stream = new FollowedStream(host, 'b', 'fs:b');
    await stream.init();
    expect(stream.floor).toMatchObject({ ms: 0, seq: 0 });
    const f = follower();
    stream.followers.add(f);
    stream.append([
      ['20-1', ['e', 'E', 'k', 'start', 'd', '{}']],
      ['20-2', ['e', 'E', 'k', 'event', 'd', '{}']],
      ['20-3', ['not', 'ours']],
      ['20-4', ['e', 'E', 'k', 'event', 'd', '{}']],
    ]);
    expect(stream.tail.map((e) => e.seq)).toEqual([2, 4]);
    expect(stream.floor).toMatchObject({ seq: 1 });
    expect(stream.lastId).toBe('20-4');
    expect(f.pumps).toBe(1);
  });

  it('replaced by a run of another epoch, it is read afresh and its followers start over', async () => {
    await addEntry(redis.cmd, 'fs:c', 30, 1, 'OLD', 'start');
    const host = recordingHost(redis.cmd, 10);
    const stream = new FollowedStream(host, 'c', 'fs:c');
    await stream.init();
    const f = follower();
    stream.followers.add(f);
    stream.resync('OLD');
    expect(stream.generation).toBe(0);
    await redis.cmd.del('fs:c');
    await addEntry(redis.cmd, 'fs:c', 40, 1, 'NEW', 'start');
    stream.resync('NEW');
    expect(stream.generation).toBe(1);
    expect(f.restarts).toBe(1);
    await expect.poll(() => stream.epoch).toBe('NEW');
    expect(stream.tail.map((e) => e.id)).toEqual(['40-1']);
    await expect.poll(() => f.pumps).toBe(1);
  });
});
