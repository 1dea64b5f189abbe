// How a session lives in Redis: the key names, the stream ids (the publisher's clock and the
// entry's number in the session), and the fields of each entry. Pure, so the publisher and
// the readers share one definition and it is tested without a server.
import { randomBytes } from 'node:crypto';
import { InputError } from '../errors/index.js';
import { fleetCursor } from '../schema/relay.js';

/** The default prefix of every key the fleet's streams use. */
export const DEFAULT_STREAM_PREFIX = 'svc-stream';

/** What an entry of a session's stream is. */
export type EntryKind = 'start' | 'event' | 'status' | 'end';

/** What an entry of the directory stream says about a session. */
export type DirectoryKind = 'start' | 'status' | 'alive' | 'end';

/** The keys of one prefix. A session's keys share a hash tag, so its append script names keys of one slot. */
export interface FleetKeys {
  /** The stream of session `id`'s entries. */
  stream(id: string): string;
  /** The epoch of session `id`'s stream (a string key with the stream's TTL). */
  epoch(id: string): string;
  /** The directory: one stream of every session's start, status, liveness and end. */
  readonly directory: string;
  /** The session id a stream key names, or undefined. */
  idOf(streamKey: string): string | undefined;
}

/** The keys under `prefix` (1 to 64 of `A-Z a-z 0-9 . _ : -`). */
export function fleetKeys(prefix: string = DEFAULT_STREAM_PREFIX): FleetKeys {
  if (!/^[A-Za-z0-9._:-]{1,64}$/.test(prefix)) throw new InputError('invalid_argument', `stream prefix ${JSON.stringify(prefix.slice(0, 80))}: use 1 to 64 of A-Z a-z 0-9 . _ : -`, { path: 'prefix' });
  const head = `${prefix}:s:{`;
  const tail = '}:events';
  return {
    stream: (id) => `${head}${id}${tail}`,
    epoch: (id) => `${head}${id}}:epoch`,
    directory: `${prefix}:sessions`,
    idOf: (key) => (key.startsWith(head) && key.endsWith(tail) ? key.slice(head.length, -tail.length) : undefined),
  };
}

/** A stream id `MS-SEQ` read as numbers. */
export interface StreamId {
  readonly ms: number;
  readonly seq: number;
}

/** Reads a stream id; undefined when it is not `MS-SEQ` with safe integers. */
export function parseStreamId(id: string): StreamId | undefined {
  const dash = id.indexOf('-');
  if (dash <= 0) return undefined;
  const ms = Number(id.slice(0, dash));
  const seq = Number(id.slice(dash + 1));
  return Number.isSafeInteger(ms) && Number.isSafeInteger(seq) && ms >= 0 && seq >= 0 ? { ms, seq } : undefined;
}

/** Orders two stream ids as Redis does (negative, 0, positive). */
export function compareStreamIds(a: string, b: string): number {
  const x = parseStreamId(a) ?? { ms: 0, seq: 0 };
  const y = parseStreamId(b) ?? { ms: 0, seq: 0 };
  return x.ms - y.ms || x.seq - y.seq;
}

/**
 * One entry of a session's stream. Its stream id is `MS-SEQ`: `MS` the publisher's clock when
 * the entry was made (never going back), `SEQ` the entry's number in the session, 1, 2, 3 …
 * within one epoch. Ids chosen by the publisher are what makes a retry exact: Redis refuses an
 * id at or below the stream's last, so an entry sent twice is stored once, for as long as the
 * stream lives (Redis 8.6's idempotent XADD forgets after a window).
 */
export interface StreamEntry {
  readonly id: string;
  readonly ms: number;
  readonly seq: number;
  readonly epoch: string;
  readonly kind: EntryKind;
  /** The entry's payload, JSON: the wire event, `{ status }`, `{ title, startedAt }`, or the end. */
  readonly data: string;
  /** Its position as pages name it: `EPOCH:MS-SEQ` (see `parseRelayCursor`). */
  readonly cursor: string;
}

const KINDS: ReadonlySet<string> = new Set<EntryKind>(['start', 'event', 'status', 'end']);

/** Field names of a stream entry: `e` epoch, `k` kind, `d` data. Short: they are stored with every entry. */
export const ENTRY_FIELDS = { epoch: 'e', kind: 'k', data: 'd' } as const;

/** Our fields of an XRANGE/XREAD row `[field, value, …]` (`s` session, `k` kind, `e` epoch, `d` data); any other is passed over. */
function ourFields(fields: readonly string[]): { s?: string | undefined; k?: string | undefined; e?: string | undefined; d?: string | undefined } {
  const out: { s?: string | undefined; k?: string | undefined; e?: string | undefined; d?: string | undefined } = {};
  for (let i = 0; i + 1 < fields.length; i += 2) {
    const f = fields[i];
    if (f === 's' || f === 'k' || f === 'e' || f === 'd') out[f] = fields[i + 1];
  }
  return out;
}

/** Reads an entry from XRANGE/XREAD's `[id, [field, value, …]]`; undefined when it is not one of ours. */
export function decodeEntry(id: string, fields: readonly string[]): StreamEntry | undefined {
  const sid = parseStreamId(id);
  if (!sid) return undefined;
  const { e: epoch, k: kind, d: data } = ourFields(fields);
  if (epoch === undefined || kind === undefined || data === undefined || !KINDS.has(kind)) return undefined;
  return { id, ms: sid.ms, seq: sid.seq, epoch, kind: kind as EntryKind, data, cursor: fleetCursor(epoch, id) };
}

/** What the directory stream says about one session (fields `s` id, `k` kind, `e` epoch, `d` JSON). */
export interface DirectoryEntry {
  /** The directory entry's own stream id. */
  readonly id: string;
  readonly session: string;
  readonly kind: DirectoryKind;
  readonly epoch: string;
  readonly info: DirectoryInfo;
}

/** The payload of a directory entry: what a listing shows. */
export interface DirectoryInfo {
  readonly title?: string | undefined;
  readonly status?: string | undefined;
  readonly startedAt?: number | undefined;
  /** Events published so far. */
  readonly events?: number | undefined;
  readonly error?: { readonly code: string; readonly message: string } | undefined;
  /** What made the session's results (a `ResultLabel`), once said: unchecked here, read by the directory. */
  readonly label?: unknown;
}

const DIRECTORY_KINDS: ReadonlySet<string> = new Set<DirectoryKind>(['start', 'status', 'alive', 'end']);

/** Reads a directory entry; undefined when it is not one of ours. */
export function decodeDirectoryEntry(id: string, fields: readonly string[]): DirectoryEntry | undefined {
  const { s: session, k: kind, e: epoch, d: data } = ourFields(fields);
  if (session === undefined || kind === undefined || epoch === undefined || !DIRECTORY_KINDS.has(kind)) return undefined;
  let info: DirectoryInfo = {};
  try {
    const parsed: unknown = JSON.parse(data ?? '{}');
    if (parsed !== null && typeof parsed === 'object') info = parsed as DirectoryInfo;
  } catch {
    // a malformed payload still names the session and its kind
  }
  return { id, session, kind: kind as DirectoryKind, epoch, info };
}

/** A fresh epoch: 12 random base64url characters, naming one life of a session's stream. */
export function newEpoch(): string {
  return randomBytes(9).toString('base64url');
}
