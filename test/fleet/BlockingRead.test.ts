// The one blocking read against a real redis-server: what the plan names is read and applied;
// a stream named while a read blocks (for a minute) is read at once, the read being cut short.
import type { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { BlockingRead, type ReadPlan } from '../../src/fleet/BlockingRead.js';
import { readyRedis, redisForFile } from './followedStreamHost.js';

const redis = redisForFile();

describe('BlockingRead', () => {
  it('reads what the plan names; a stream named later cuts the blocking read short', async () => {
    const blocking: Redis = await readyRedis(redis.url);
    const keys = ['br:a'];
    const got: string[] = [];
    const stats = { reads: 0 };
    const plan = (): ReadPlan => {
      const now = [...keys];
      return { keys: now, ids: now.map(() => '$'), apply: (result) => result.forEach(([key, rows]) => rows.forEach(([id]) => got.push(`${key} ${id}`))) };
    };
    const reads = new BlockingRead(blocking, redis.cmd, 60_000, { plan, failed: () => undefined, answered: () => undefined, stats });
    blocking.emit('ready'); // already connected: ask its id as on a (re)connect
    const done = reads.run();
    try {
      await expect.poll(() => stats.reads).toBeGreaterThan(0);
      await redis.cmd.xadd('br:a', '1-1', 'f', 'v');
      await expect.poll(() => got).toEqual(['br:a 1-1']);
      // Blocking again, on br:a alone, for a minute: naming br:b must cut it short.
      const before = stats.reads;
      keys.push('br:b');
      reads.wakeUp();
      await expect.poll(() => stats.reads, { timeout: 5000 }).toBeGreaterThan(before);
      await redis.cmd.xadd('br:b', '1-1', 'f', 'v');
      await expect.poll(() => got, { timeout: 5000 }).toEqual(['br:a 1-1', 'br:b 1-1']);
    } finally {
      reads.close();
      blocking.disconnect();
      await done;
    }
  });
});
