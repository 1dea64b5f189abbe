// The one Lua script a publisher writes a session's entries with, and the client it is defined on:
// the claim of a session's stream by its epoch, and ids at or below the stream's last counted as
// already stored, which is what makes a retry exact.
import type { Redis } from 'ioredis';

/**
 * Appends a batch of one session's entries. KEYS: the stream, its epoch key. ARGV: the epoch,
 * the MINID threshold, the keys' TTL, then (id, kind, data) per entry. A batch that starts with
 * `start` claims the session (replacing another epoch's stream); any other batch needs the
 * stream to still be this epoch's: `lost` when it is gone, `taken` when another run owns it.
 * An id at or below the stream's last is one Redis already has (a retry): counted, not added.
 */
export const APPEND_SCRIPT = `
local epoch = ARGV[1]
local cur = redis.call('GET', KEYS[2])
if ARGV[5] == 'start' then
  if cur ~= epoch then
    redis.call('DEL', KEYS[1])
    redis.call('SET', KEYS[2], epoch)
  end
elseif not cur then
  return {'lost', 0, 0}
elseif cur ~= epoch then
  return {'taken', 0, 0}
end
local added, dup = 0, 0
for i = 4, #ARGV, 3 do
  local r = redis.pcall('XADD', KEYS[1], 'MINID', '~', ARGV[2], ARGV[i], 'e', epoch, 'k', ARGV[i + 1], 'd', ARGV[i + 2])
  if type(r) == 'table' and r.err then
    if string.find(r.err, 'equal or smaller', 1, true) then dup = dup + 1 else return redis.error_reply(r.err) end
  else
    added = added + 1
  end
end
redis.call('PEXPIRE', KEYS[1], ARGV[3])
redis.call('PEXPIRE', KEYS[2], ARGV[3])
return {'ok', added, dup}
`;

/** A client with the script defined: `svcStreamAppend(streamKey, epochKey, epoch, minId, ttl, ...(id, kind, data))` → `[result, added, duplicates]`. */
export type AppendClient = Redis & { svcStreamAppend(streamKey: string, epochKey: string, ...args: (string | number)[]): Promise<[string, number, number]> };

/** `client`, with the append script defined on it (once: a shared client may come here again). */
export function appendClient(client: Redis): AppendClient {
  const c = client as AppendClient;
  if (typeof c.svcStreamAppend !== 'function') client.defineCommand('svcStreamAppend', { numberOfKeys: 2, lua: APPEND_SCRIPT });
  return c;
}
