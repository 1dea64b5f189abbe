// The fleet's writer: each session's events, status and end appended to its Redis stream,
// with ids the publisher chooses (so a retry is stored once), trimmed by age, and a directory
// of sessions every relay reads. One connection for every session of a process; while Redis
// is away entries wait (bounded) and the calls go on; what could not be published is counted.
// This file reads the options and opens the connection; the engine is PublisherCore.ts, one
// session's queue SessionWriter.ts, the append script appendScript.ts.
import type { Redis } from 'ioredis';
import { asyncScheduler, type SchedulerLike } from 'rxjs';
import { InputError, type SvcError } from '../errors/index.js';
import { positiveOption } from '../internal/positiveOption.js';
import type { Publisher } from '../publishing.js';
import { PublisherCore, type PublisherSettings } from './PublisherCore.js';
import { checkRedisUrl, openRedis, redactRedisUrl } from './redisConnection.js';
import { DEFAULT_STREAM_PREFIX, fleetKeys } from './streamEntries.js';

/** How a {@link Publisher} writes. Every field is optional but the Redis to write to. */
export interface PublisherOptions {
  /** Redis to publish to (`redis://[user:pass@]host:port[/db]`, `rediss://…`). Default `SVC_PUBLISH_URL`. */
  readonly url?: string | undefined;
  /** An ioredis client to use instead of `url` (not closed by `close()`). Give it `enableOfflineQueue: false`. */
  readonly redis?: Redis | undefined;
  /** Prefix of every key (1 to 64 of `A-Z a-z 0-9 . _ : -`). Relays read the same prefix. Default `svc-stream`. */
  readonly prefix?: string | undefined;
  /** Entries older than this are trimmed from the streams (Redis `MINID`), and an ended session's keys expire after it. Default 3 600 000 ms (one hour). */
  readonly retentionMs?: number | undefined;
  /** Entries held while Redis is away, over all sessions; past it new events are dropped and counted `notPublished` (status and end entries are always kept). Default 100 000. */
  readonly maxPendingEntries?: number | undefined;
  /** Bytes of entries held while Redis is away. Default 32 MiB. */
  readonly maxPendingBytes?: number | undefined;
  /** How often live sessions are announced alive (the directory) and their keys' expiry renewed; relays show a session whose publisher went quiet for three of these as `stale`. Default 15 000 ms. */
  readonly aliveMs?: number | undefined;
  /**
   * The one deadline of `close()`: waiting for what is still pending (while Redis answers; when it
   * is known to be away, at once) and the QUIT, together. Default 5 000 ms.
   */
  readonly closeTimeoutMs?: number | undefined;
  /** Called once per outage, at its first failure (the calls go on; entries wait, bounded); the outage ends at the first write that succeeds. */
  readonly onRedisError?: ((error: SvcError) => void) | undefined;
  /** The clock of entry ids and trimming, ms since the epoch. Default `Date.now`. */
  readonly now?: (() => number) | undefined;
  /** Scheduler of the retry and alive timers. Default `asyncScheduler`. */
  readonly scheduler?: SchedulerLike | undefined;
}

const DEFAULTS = {
  retentionMs: 3_600_000,
  maxPendingEntries: 100_000,
  maxPendingBytes: 32 << 20,
  aliveMs: 15_000,
  closeTimeoutMs: 5_000,
} as const;

function settingsOf(options: PublisherOptions): PublisherSettings {
  return {
    keys: fleetKeys(options.prefix ?? DEFAULT_STREAM_PREFIX),
    retentionMs: positiveOption('publish', 'retentionMs', options.retentionMs, DEFAULTS.retentionMs),
    maxEntries: positiveOption('publish', 'maxPendingEntries', options.maxPendingEntries, DEFAULTS.maxPendingEntries),
    maxBytes: positiveOption('publish', 'maxPendingBytes', options.maxPendingBytes, DEFAULTS.maxPendingBytes),
    aliveMs: positiveOption('publish', 'aliveMs', options.aliveMs, DEFAULTS.aliveMs),
    closeTimeoutMs: positiveOption('publish', 'closeTimeoutMs', options.closeTimeoutMs, DEFAULTS.closeTimeoutMs),
    now: options.now ?? Date.now,
    scheduler: options.scheduler ?? asyncScheduler,
    onRedisError: options.onRedisError,
    ownsClient: options.redis === undefined,
  };
}

/** The Redis URL of `options`, or SVC_PUBLISH_URL; throws `invalid_argument` without one. */
function publishUrl(options: PublisherOptions): string {
  const url = options.url ?? process.env['SVC_PUBLISH_URL'];
  if (url === undefined || url === '') throw new InputError('invalid_argument', 'publishing needs a Redis URL: the url option or SVC_PUBLISH_URL', { path: 'url' });
  return checkRedisUrl(url, 'url');
}

/**
 * A publisher of live sessions to Redis Streams, for relays anywhere in the fleet
 * (`createRelay({ from })`, `svc-stream relay --from`) to serve.
 *
 * - `session(id)` starts one session's stream (`start`, then each `event`, `status` and the
 *   `end`); one connection serves every session of the process.
 * - Never blocks a call: each entry is queued and written in the background, in batches, by
 *   one script per session that appends with ids the publisher chose (`MS-SEQ`: its clock and
 *   the entry's number in the session), so an entry sent again after a lost reply is stored
 *   once. Entries older than `retentionMs` are trimmed (`MINID`).
 * - While Redis is away entries wait, bounded by `maxPendingEntries` / `maxPendingBytes`
 *   (events past them are dropped and counted; relays show the hole as a `gap`), and are
 *   written when it is back. `onRedisError` is told once per outage (from the first failure
 *   to the first write that succeeds). Every entry is counted once: `published` (Redis said
 *   so), `notPublished` (known not stored), `unconfirmed` (sent, no answer by `close()`'s
 *   deadline) or `pending`; each session's `settled` report says it.
 * - `close()` ends within `closeTimeoutMs` (5 s), its QUIT included, whatever Redis does.
 * - When a stream was lost (Redis restarted without persistence) the session goes on in a new
 *   epoch, so relays send their pages an explicit `reset` instead of a silent gap.
 * - ioredis is an optional peer dependency, loaded here: rejects with `missing_dependency`
 *   when it is not installed, `invalid_argument` for a bad option or URL. Redis being
 *   unreachable is not an error here: the connection is retried for as long as it lives.
 *
 * ## Example
 * ```ts
 * import { createPublisher, publishSession } from 'svc-stream/fleet';
 *
 * const publisher = await createPublisher({ url: 'redis://10.0.0.5:6379' });
 * publishSession(events$, { publisher, id: 'call-17' }).subscribe();
 * // … when the process stops:
 * const { notPublished, unconfirmed } = await publisher.close();
 * ```
 */
export async function createPublisher(options: PublisherOptions = {}): Promise<Publisher> {
  const { core, client } = open(options);
  await client;
  return core;
}

/** A publisher whose connection may still be loading (internal: `publishSession` with a `url`). */
export function startPublisher(options: PublisherOptions): Publisher {
  const { core, client } = open(options);
  client.catch(() => undefined);
  return core;
}

function open(options: PublisherOptions): { core: PublisherCore; client: Promise<Redis> } {
  const target = options.redis ? 'the given Redis client' : redactRedisUrl(publishUrl(options));
  const settings = settingsOf(options);
  const client = options.redis ? Promise.resolve(options.redis) : openRedis(publishUrl(options), 'publishing to Redis', { connectionName: 'svc-stream:publisher' });
  return { core: new PublisherCore(settings, target, client), client };
}
