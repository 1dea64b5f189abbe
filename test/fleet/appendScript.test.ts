// The append script against a real redis-server: a start claims the stream for its epoch, a
// batch of another run is refused (`taken`), a stream gone is `lost`, an entry sent again is
// counted as stored and not added twice.
import { describe, expect, it } from 'vitest';
import { appendClient } from '../../src/fleet/appendScript.js';
import { redisForFile } from './followedStreamHost.js';

const redis = redisForFile();

describe('appendScript', () => {
  it('claims, refuses another run, stores a retry once, and says lost when the stream is gone', async () => {
    const c = appendClient(redis.cmd);
    expect(appendClient(redis.cmd)).toBe(c);
    const append = (epoch: string, ...entries: string[][]) => c.svcStreamAppend('s', 's:epoch', epoch, '0-0', 60_000, ...entries.flat());
    expect(await append('E1', ['10-1', 'start', '{}'], ['10-2', 'event', '{}'])).toEqual(['ok', 2, 0]);
    expect(await append('E1', ['10-2', 'event', '{}'], ['10-3', 'event', '{}'])).toEqual(['ok', 1, 1]);
    expect(await append('E2', ['11-1', 'event', '{}'])).toEqual(['taken', 0, 0]);
    expect(await redis.cmd.xlen('s')).toBe(3);
    expect(await redis.cmd.pttl('s')).toBeGreaterThan(0);
    await redis.cmd.del('s', 's:epoch');
    expect(await append('E1', ['12-1', 'event', '{}'])).toEqual(['lost', 0, 0]);
    expect(await append('E3', ['12-1', 'start', '{}'])).toEqual(['ok', 1, 0]);
    expect(await redis.cmd.get('s:epoch')).toBe('E3');
  });

  it('a write Redis refuses (out of memory) ends the batch and says how many came before it', async () => {
    const c = appendClient(redis.cmd);
    const append = (epoch: string, ...entries: string[][]) => c.svcStreamAppend('m', 'm:epoch', epoch, '0-0', 60_000, ...entries.flat());
    expect(await append('E1', ['10-1', 'start', '{}'], ['10-2', 'event', '{}'])).toEqual(['ok', 2, 0]);
    await redis.cmd.config('SET', 'maxmemory', '1');
    try {
      const reply = await append('E1', ['10-2', 'event', '{}'], ['10-3', 'event', '{}']);
      // The retried entry is already there (a duplicate, not a write); the next is refused.
      expect(reply.slice(0, 3)).toEqual(['err', 0, 1]);
      expect(reply[3]).toMatch(/^OOM/);
      // A start cannot claim the stream either: nothing of its batch is stored.
      expect((await append('E2', ['11-1', 'start', '{}'])).slice(0, 3)).toEqual(['err', 0, 0]);
    } finally {
      await redis.cmd.config('SET', 'maxmemory', '0');
    }
    expect(await redis.cmd.xlen('m')).toBe(2);
    expect(await redis.cmd.get('m:epoch')).toBe('E1');
  });
});
