// The one Lua script a publisher writes a session's entries with, and the client it is defined on:
// the claim of a session's stream by its epoch, and ids at or below the stream's last counted as
// already stored, which is what makes a retry exact. Every call in it is guarded, so a reply
// always says how many entries of the batch Redis holds (a refused write stops the batch there).
import type { Redis } from 'ioredis';

/**
 * Appends a batch of one session's entries. KEYS: the stream, its epoch key. ARGV: the epoch,
 * the MINID threshold, the keys' TTL, then (id, kind, data) per entry. A batch that starts with
 * `start` claims the session (replacing another epoch's stream); any other batch needs the
 * stream to still be this epoch's: `lost` when it is gone, `taken` when another run owns it.
 * An id at or below the stream's last (its last generated id) is one Redis already has (a
 * retry): counted, not added.
 * A write Redis refuses (out of memory, a read-only replica) ends the batch with
 * `{'err', added, duplicates, message}`: the first `added + duplicates` entries are stored, the
 * rest are not.
 */
export const APPEND_SCRIPT = `
local epoch = ARGV[1]
local cur = redis.call('GET', KEYS[2])
if ARGV[5] == 'start' then
  if cur ~= epoch then
    local r = redis.pcall('SET', KEYS[2], epoch)
    if type(r) == 'table' and r.err then return {'err', 0, 0, r.err} end
    redis.pcall('DEL', KEYS[1])
  end
elseif not cur then
  return {'lost', 0, 0}
elseif cur ~= epoch then
  return {'taken', 0, 0}
end
-- What the stream already holds is decided by its last id, before any write: Redis refuses a
-- write when its memory is full even when the entry is already there.
local lms, lseq = 0, 0
local info = redis.pcall('XINFO', 'STREAM', KEYS[1])
if type(info) == 'table' and not info.err then
  for i = 1, #info, 2 do
    if info[i] == 'last-generated-id' then
      local m, q = string.match(info[i + 1], '^(%d+)-(%d+)$')
      lms, lseq = tonumber(m), tonumber(q)
    end
  end
end
local added, dup = 0, 0
for i = 4, #ARGV, 3 do
  local m, q = string.match(ARGV[i], '^(%d+)-(%d+)$')
  m, q = tonumber(m), tonumber(q)
  if m < lms or (m == lms and q <= lseq) then
    dup = dup + 1
  else
    local r = redis.pcall('XADD', KEYS[1], 'MINID', '~', ARGV[2], ARGV[i], 'e', epoch, 'k', ARGV[i + 1], 'd', ARGV[i + 2])
    if type(r) == 'table' and r.err then return {'err', added, dup, r.err} end
    added = added + 1
    lms, lseq = m, q
  end
end
redis.pcall('PEXPIRE', KEYS[1], ARGV[3])
redis.pcall('PEXPIRE', KEYS[2], ARGV[3])
return {'ok', added, dup}
`;

/** What the script answers: `ok`, `lost`, `taken`, or `err` with the message of the write Redis refused. */
export type AppendReply = [result: 'ok' | 'lost' | 'taken', added: number, duplicates: number] | [result: 'err', added: number, duplicates: number, message: string];

/** A client with the script defined: `svcStreamAppend(streamKey, epochKey, epoch, minId, ttl, ...(id, kind, data))`. */
export type AppendClient = Redis & { svcStreamAppend(streamKey: string, epochKey: string, ...args: (string | number)[]): Promise<AppendReply> };

/** `client`, with the append script defined on it (once: a shared client may come here again). */
export function appendClient(client: Redis): AppendClient {
  const c = client as AppendClient;
  if (typeof c.svcStreamAppend !== 'function') client.defineCommand('svcStreamAppend', { numberOfKeys: 2, lua: APPEND_SCRIPT });
  return c;
}
