// One redis-server for a test file, and a plain client to look at what was written: started in
// beforeAll, stopped in afterAll, so a file says `const r = useRedis()` instead of the hooks.
import { Redis } from 'ioredis';
import { afterAll, beforeAll } from 'vitest';
import { decodeEntry, fleetKeys, type StreamEntry } from '../../src/fleet/streamEntries.js';
import { startRedis, type RunningRedis } from './redisServer.js';

export interface RedisFixture {
  /** The server (set once beforeAll ran). */
  readonly server: RunningRedis;
  /** A client of the test's own, for reading and planting keys. */
  readonly admin: Redis;
  /** The entries stored for session `id` (under `prefix`, or the default one), decoded. */
  stored(id: string, prefix?: string): Promise<StreamEntry[]>;
}

/** Register the hooks that start and stop a redis-server (with `extraArgs`) and its admin client. */
export function useRedis(extraArgs: readonly string[] = []): RedisFixture {
  let server: RunningRedis | undefined;
  let admin: Redis | undefined;
  beforeAll(async () => {
    server = await startRedis(extraArgs);
    admin = new Redis(server.url);
  });
  afterAll(async () => {
    admin?.disconnect();
    await server?.stop();
  });
  return {
    get server() {
      return server!;
    },
    get admin() {
      return admin!;
    },
    async stored(id, prefix) {
      const rows = (await admin!.xrange(fleetKeys(prefix).stream(id), '-', '+')) as [string, string[]][];
      return rows.map(([rid, f]) => decodeEntry(rid, f)!);
    },
  };
}
