// A followed stream's host for the tests of FollowedStream and StreamFollower: the real command
// connection to a real redis-server, and the reader's other duties recorded instead of done.
import type { Redis } from 'ioredis';
import { afterAll, beforeAll } from 'vitest';
import type { FollowedStream, StreamHost, TailFollower } from '../../src/fleet/FollowedStream.js';
import { openRedis } from '../../src/fleet/redisConnection.js';
import { startRedis, type RunningRedis } from './redisServer.js';

export interface RecordingHost extends StreamHost {
  woken: number;
  readonly unfollowed: Array<TailFollower | undefined>;
  readonly waiting: TailFollower[];
}

export function recordingHost(cmd: Redis, tailEntries: number, pageEntries = 2): RecordingHost {
  const host: RecordingHost = {
    cmd,
    tailEntries,
    tailBytes: 1 << 20,
    pageEntries,
    stats: { pages: 0 },
    woken: 0,
    unfollowed: [],
    waiting: [],
    wakeLoop: () => void host.woken++,
    owns: (_: FollowedStream) => true,
    unfollow: (_: FollowedStream, f: TailFollower | undefined) => void host.unfollowed.push(f),
    waitForRedis: (f: TailFollower) => void host.waiting.push(f),
  };
  return host;
}

/** XADD an entry of ours at `ms-seq`. */
export async function addEntry(cmd: Redis, key: string, ms: number, seq: number, epoch: string, kind: string, data = '{}'): Promise<void> {
  await cmd.xadd(key, `${ms}-${seq}`, 'e', epoch, 'k', kind, 'd', data);
}

/** A command connection to `url`, once it answers. */
export async function readyRedis(url: string): Promise<Redis> {
  const cmd = await openRedis(url, 'the test');
  if (cmd.status !== 'ready') await new Promise((resolve) => cmd.once('ready', resolve));
  return cmd;
}

/** A redis-server and a command connection to it for the file's tests (started before, stopped after). */
export function redisForFile(): { readonly cmd: Redis; readonly url: string } {
  let redis: RunningRedis | undefined;
  const state = { cmd: undefined as unknown as Redis, url: '' };
  beforeAll(async () => {
    redis = await startRedis();
    state.url = redis.url;
    state.cmd = await readyRedis(redis.url);
  });
  afterAll(async () => {
    state.cmd?.disconnect();
    await redis?.stop();
  });
  return state;
}
