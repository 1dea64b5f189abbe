// The fleet's writer: each session's events, status and end appended to its Redis stream,
// with ids the publisher chooses (so a retry is stored once), trimmed by age, and a directory
// of sessions every relay reads. One connection for every session of a process; while Redis
// is away entries wait (bounded) and the calls go on; what could not be published is counted.
import type { Redis } from 'ioredis';
import { asyncScheduler, Observable, timer, type SchedulerLike, type Subscription } from 'rxjs';
import { InputError, SvcError } from '../errors.js';
import { positiveOption } from '../internal/positiveOption.js';
import { callUser } from '../internal/userCallback.js';
import type { PublishOptions, PublishReport, PublishStats, Publisher, SessionPublisher } from '../publishing.js';
import type { ServerEvent } from '../schema/events.js';
import { errorSummary, wireEvent, type RelayEnd } from '../schema/relay.js';
import { checkSessionId } from '../schema/sessionId.js';
import type { SessionState } from '../schema/sessionState.js';
import { checkRedisUrl, openRedis, redactRedisUrl, redisError } from './redisConnection.js';
import { DEFAULT_STREAM_PREFIX, fleetKeys, newEpoch, type DirectoryKind, type EntryKind, type FleetKeys } from './streamEntries.js';

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
  /** Entries held while Redis is away, over all sessions; past it new events are dropped and counted unpublished (status and end entries are always kept). Default 100 000. */
  readonly maxPendingEntries?: number | undefined;
  /** Bytes of entries held while Redis is away. Default 32 MiB. */
  readonly maxPendingBytes?: number | undefined;
  /** How often live sessions are announced alive (the directory) and their keys' expiry renewed; relays show a session whose publisher went quiet for three of these as `stale`. Default 15 000 ms. */
  readonly aliveMs?: number | undefined;
  /** How long `close()` waits for what is still pending while Redis answers (when it is away, `close()` gives up at once). Default 5 000 ms. */
  readonly closeTimeoutMs?: number | undefined;
  /** Called once each time Redis becomes unreachable (the calls go on; entries wait, bounded). */
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
/** Entries one script call appends at most. */
const BATCH = 256;
/** Statuses worth an entry: `paused` and `closing` come and go with flow control and the close handshake. */
const PUBLISHED_STATUSES: ReadonlySet<string> = new Set(['connecting', 'streaming', 'finishing', 'reconnecting']);

/**
 * Appends a batch of one session's entries. KEYS: the stream, its epoch key. ARGV: the epoch,
 * the MINID threshold, the keys' TTL, then (id, kind, data) per entry. A batch that starts with
 * `start` claims the session (replacing another epoch's stream); any other batch needs the
 * stream to still be this epoch's: `lost` when it is gone, `taken` when another run owns it.
 * An id at or below the stream's last is one Redis already has (a retry): counted, not added.
 */
const APPEND_SCRIPT = `
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

type AppendClient = Redis & { svcStreamAppend(streamKey: string, epochKey: string, ...args: (string | number)[]): Promise<[string, number, number]> };

interface Entry {
  ms: number;
  seq: number;
  readonly kind: EntryKind;
  readonly data: string;
}

interface DirectoryNote {
  readonly session: string;
  readonly kind: DirectoryKind;
  readonly epoch: string;
  readonly data: string;
}

function freshStats(): PublishStats {
  return { entries: 0, published: 0, unpublished: 0, pending: 0, outages: 0, streamsLost: 0 };
}

class SessionWriter implements SessionPublisher {
  readonly stats = freshStats();
  epoch = newEpoch();
  readonly queue: Entry[] = [];
  private seq = 0;
  private lastMs = 0;
  private lastStatus = '';
  private ended = false;
  gaveUp = false;
  events = 0;
  error: SvcError | undefined;
  readonly settled: Promise<PublishReport>;
  private resolveSettled!: (report: PublishReport) => void;
  private done = false;

  constructor(
    private readonly owner: PublisherCore,
    readonly id: string,
    readonly title: string,
    readonly startedAt: number,
  ) {
    this.settled = new Promise((resolve) => (this.resolveSettled = resolve));
    this.push('start', JSON.stringify({ title, startedAt }));
    this.owner.note(this, 'start', { title, startedAt, status: 'connecting', events: 0 });
  }

  get live(): boolean {
    return !this.ended;
  }

  private push(kind: EntryKind, data: string): void {
    if (this.gaveUp) {
      this.count('entries', 1);
      this.count('unpublished', 1);
      this.checkSettled();
      return;
    }
    const ms = (this.lastMs = Math.max(this.owner.now(), this.lastMs));
    const seq = ++this.seq;
    this.count('entries', 1);
    // Only events are dropped past the bounds: the start, statuses and the end always wait.
    if (kind === 'event' && !this.owner.room(data.length)) {
      this.count('unpublished', 1);
      this.error ??= this.owner.overflowError();
      return;
    }
    this.queue.push({ ms, seq, kind, data });
    this.owner.held(1, data.length);
    this.count('pending', 1);
    this.owner.enqueued(this);
  }

  count(field: keyof PublishStats, n: number): void {
    this.stats[field] += n;
    this.owner.stats[field] += n;
  }

  event(event: ServerEvent): void {
    if (this.ended) return;
    this.events++;
    this.push('event', JSON.stringify(wireEvent(event)));
  }

  status(status: string): void {
    if (this.ended || status === this.lastStatus) return;
    this.lastStatus = status;
    this.push('status', JSON.stringify({ status }));
    this.owner.note(this, 'status', { status, events: this.events });
  }

  private following: Subscription | undefined;

  follow(state$: Observable<SessionState>): void {
    this.following?.unsubscribe();
    if (this.ended) return;
    this.following = state$.subscribe((next) => {
      const status = next.status === 'paused' ? 'streaming' : next.status;
      if (PUBLISHED_STATUSES.has(status)) this.status(status);
    });
  }

  end(end: RelayEnd): void {
    if (this.ended) return;
    this.ended = true;
    this.following?.unsubscribe();
    this.push('end', JSON.stringify(end));
    this.owner.note(this, 'end', { status: end.status, events: this.events, ...(end.error ? { error: end.error } : {}) });
    this.owner.ended(this);
    this.checkSettled();
  }

  /** The stream was lost: a new epoch, numbered from 1 again, starting with a `start` that says so. */
  restart(): void {
    this.epoch = newEpoch();
    this.count('streamsLost', 1);
    const pending = this.queue.splice(0);
    this.seq = 0;
    const first = pending[0]?.ms ?? this.owner.now();
    const start: Entry = { ms: first, seq: ++this.seq, kind: 'start', data: JSON.stringify({ title: this.title, startedAt: this.startedAt, restarted: true }) };
    this.queue.push(start);
    this.owner.held(1, start.data.length);
    this.count('pending', 1);
    for (const e of pending) {
      e.seq = ++this.seq;
      this.queue.push(e);
    }
    this.owner.enqueued(this);
    this.owner.note(this, 'start', { title: this.title, startedAt: this.startedAt, status: this.lastStatus || 'streaming', events: this.events });
  }

  /** Entries stored (or found already stored): off the queue. */
  acknowledge(n: number): void {
    const taken = this.queue.splice(0, n);
    this.owner.held(-taken.length, -taken.reduce((s, e) => s + e.data.length, 0));
    this.count('pending', -taken.length);
    this.count('published', taken.length);
    if (this.queue.length > 0) this.owner.enqueued(this);
    this.checkSettled();
  }

  /** Give up on every pending entry (and any later one), with `error` as the reason. */
  abandon(error: SvcError): void {
    const taken = this.queue.splice(0);
    this.owner.held(-taken.length, -taken.reduce((s, e) => s + e.data.length, 0));
    this.count('pending', -taken.length);
    this.count('unpublished', taken.length);
    this.error = error;
    this.gaveUp = true;
    this.checkSettled();
  }

  batch(): Entry[] {
    return this.queue.slice(0, BATCH);
  }

  checkSettled(): void {
    if (this.done || !this.ended || this.queue.length > 0) return;
    this.done = true;
    this.resolveSettled({ id: this.id, ...this.stats, ...(this.stats.unpublished > 0 && this.error ? { error: this.error } : {}) });
  }
}

/** The shared part: one connection, the flush loop, the bounds, the directory notes. */
class PublisherCore implements Publisher {
  readonly stats = freshStats();
  private readonly keys: FleetKeys;
  private readonly sessions = new Map<string, SessionWriter>();
  /** Sessions with entries to write, oldest first. */
  private readonly writers = new Set<SessionWriter>();
  private readonly directory: DirectoryNote[] = [];
  private heldEntries = 0;
  private heldBytes = 0;
  private client: AppendClient | undefined;
  private flushing = false;
  private scheduled = false;
  private down = false;
  private retry: Subscription | undefined;
  private retryMs = 50;
  private readonly alive: Subscription;
  private closed = false;
  readonly now: () => number;
  private readonly scheduler: SchedulerLike;
  private readonly retentionMs: number;
  private readonly maxEntries: number;
  private readonly maxBytes: number;
  private readonly aliveMs: number;
  private readonly closeTimeoutMs: number;
  private idle: (() => void) | undefined;

  constructor(
    private readonly options: PublisherOptions,
    readonly target: string,
    client: Promise<Redis>,
  ) {
    this.keys = fleetKeys(options.prefix ?? DEFAULT_STREAM_PREFIX);
    this.retentionMs = positiveOption('publish', 'retentionMs', options.retentionMs, DEFAULTS.retentionMs);
    this.maxEntries = positiveOption('publish', 'maxPendingEntries', options.maxPendingEntries, DEFAULTS.maxPendingEntries);
    this.maxBytes = positiveOption('publish', 'maxPendingBytes', options.maxPendingBytes, DEFAULTS.maxPendingBytes);
    this.aliveMs = positiveOption('publish', 'aliveMs', options.aliveMs, DEFAULTS.aliveMs);
    this.closeTimeoutMs = positiveOption('publish', 'closeTimeoutMs', options.closeTimeoutMs, DEFAULTS.closeTimeoutMs);
    this.now = options.now ?? Date.now;
    this.scheduler = options.scheduler ?? asyncScheduler;
    this.alive = timer(this.aliveMs, this.aliveMs, this.scheduler).subscribe(() => this.announce());
    this.loaded = client.then(
      (c) => {
        const appendClient = c as AppendClient;
        if (typeof appendClient.svcStreamAppend !== 'function') c.defineCommand('svcStreamAppend', { numberOfKeys: 2, lua: APPEND_SCRIPT });
        this.client = appendClient;
        let lastError: unknown;
        c.on('error', (err: unknown) => (lastError = err));
        c.on('close', () => {
          if (!this.closed) this.wentDown(lastError);
        });
        c.on('ready', () => {
          this.down = false;
          this.retryMs = 50;
          this.retry?.unsubscribe();
          this.wake();
        });
        this.wake();
      },
      (err: unknown) => {
        // ioredis is not installed: nothing can be published, and every session says why.
        const error = err instanceof SvcError ? err : redisError(err, 'cannot load the Redis client');
        this.failAll(error);
      },
    );
  }

  /** Settles once the client is loaded (or could not be). */
  private readonly loaded: Promise<void>;

  private fatal: SvcError | undefined;

  private failAll(error: SvcError): void {
    this.fatal = error;
    // Nothing will ever be written: no timer keeps the process alive for it.
    this.alive.unsubscribe();
    callUser(this.options.onRedisError, error);
    for (const w of this.sessions.values()) w.abandon(error);
    this.writers.clear();
  }

  session(id: string, options: { readonly title?: string | undefined } = {}): SessionPublisher {
    checkSessionId(id);
    if (this.closed) throw new InputError('invalid_argument', `the publisher to ${this.target} is closed`);
    const running = this.sessions.get(id);
    if (running?.live) throw new InputError('invalid_argument', `session ${id} is already being published by this process`, { path: 'id' });
    const writer = new SessionWriter(this, id, options.title ?? id, this.now());
    this.sessions.set(id, writer);
    if (this.fatal) writer.abandon(this.fatal);
    return writer;
  }

  publish(events$: Observable<ServerEvent>, options: PublishOptions): Observable<ServerEvent> {
    return new Observable<ServerEvent>((subscriber) => {
      let session: SessionPublisher;
      try {
        session = this.session(options.id, { title: options.title });
      } catch (err) {
        subscriber.error(err);
        return;
      }
      if (options.onReport) void session.settled.then((report) => callUser(options.onReport, report));
      if (options.state$) session.follow(options.state$);
      const sub = events$.subscribe({
        next: (event) => {
          session.event(event);
          subscriber.next(event);
        },
        error: (err: unknown) => {
          session.end({ status: 'failed', error: errorSummary(err) });
          subscriber.error(err);
        },
        complete: () => {
          session.end({ status: 'done' });
          subscriber.complete();
        },
      });
      return () => {
        sub.unsubscribe();
        session.end({ status: 'closed' });
      };
    });
  }

  room(bytes: number): boolean {
    return this.heldEntries < this.maxEntries && this.heldBytes + bytes <= this.maxBytes;
  }

  overflowError(): SvcError {
    return new SvcError('redis_unavailable', `entries were dropped: Redis at ${this.target} was away while more than ${this.maxEntries} entries or ${this.maxBytes} bytes waited`, { retryable: true });
  }

  held(entries: number, bytes: number): void {
    this.heldEntries += entries;
    this.heldBytes += bytes;
  }

  note(writer: SessionWriter, kind: DirectoryKind, info: Record<string, unknown>): void {
    if (this.fatal) return;
    this.directory.push({ session: writer.id, kind, epoch: writer.epoch, data: JSON.stringify(info) });
    // The directory is small and only summarises: when Redis is away long, keep its latest notes.
    if (this.directory.length > 10_000) this.directory.splice(0, this.directory.length - 10_000);
    this.wake();
  }

  ended(writer: SessionWriter): void {
    // Settled writers leave the map once their entries are written, so an id can run again.
    void writer.settled.then(() => {
      if (this.sessions.get(writer.id) === writer) this.sessions.delete(writer.id);
    });
  }

  /** `writer` has entries to write. */
  enqueued(writer: SessionWriter): void {
    this.writers.add(writer);
    this.wake();
  }

  /** Something is to be written: flush soon (after the current turn, so entries batch). */
  wake(): void {
    if (this.scheduled || this.flushing || this.down || !this.client) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      void this.flush();
    });
  }

  private minId(): string {
    return `${Math.max(0, this.now() - this.retentionMs)}-0`;
  }

  private ttl(): number {
    return this.retentionMs + 4 * this.aliveMs;
  }

  private async flush(): Promise<void> {
    const client = this.client;
    if (!client || this.flushing) return;
    // Not connected (yet, or again): ioredis reconnects and says `ready`.
    if (client.status !== 'ready') return;
    this.flushing = true;
    const minId = this.minId();
    const ttl = this.ttl();
    const work: Promise<void>[] = [];
    let failure: unknown;
    for (const writer of [...this.writers]) {
      this.writers.delete(writer);
      const batch = writer.batch();
      if (batch.length === 0) continue;
      const args: (string | number)[] = [writer.epoch, minId, ttl];
      for (const e of batch) args.push(`${e.ms}-${e.seq}`, e.kind, e.data);
      const epoch = writer.epoch;
      work.push(
        client.svcStreamAppend(this.keys.stream(writer.id), this.keys.epoch(writer.id), ...args).then(
          ([result, added, dup]) => {
            if (writer.epoch !== epoch) return;
            if (result === 'ok') writer.acknowledge(Number(added) + Number(dup));
            else if (result === 'lost') writer.restart();
            else writer.abandon(new SvcError('invalid_argument', `session ${writer.id} was taken over by another publisher (a new run of the same id); this run's entries stop here`));
          },
          (err: unknown) => {
            failure ??= err;
            this.writers.add(writer);
          },
        ),
      );
    }
    const notes = this.directory.splice(0, 512);
    for (const n of notes) {
      work.push(client.xadd(this.keys.directory, 'MINID', '~', minId, '*', 's', n.session, 'k', n.kind, 'e', n.epoch, 'd', n.data).then(
        () => undefined,
        (err: unknown) => {
          failure ??= err;
          this.directory.unshift(n);
        },
      ));
    }
    await Promise.all(work);
    this.flushing = false;
    if (failure !== undefined) {
      this.wentDown(failure);
      return;
    }
    this.retryMs = 50;
    this.wake();
    if (this.writers.size === 0 && this.directory.length === 0) this.idle?.();
  }

  private wentDown(err: unknown): void {
    const error = redisError(err ?? new Error('connection closed'), `cannot publish to Redis at ${this.target}`);
    if (!this.down) {
      this.down = true;
      this.count('outages');
      callUser(this.options.onRedisError, error);
    }
    for (const w of this.sessions.values()) if (w.queue.length > 0) w.error = error;
    // ioredis reconnects on its own and says `ready`; a timer also tries again, for a
    // connection that is up but failing commands (a loading replica, a full memory).
    this.retry?.unsubscribe();
    this.retry = timer(this.retryMs, this.scheduler).subscribe(() => {
      this.down = false;
      this.wake();
    });
    this.retryMs = Math.min(this.retryMs * 2, 2000);
  }

  private count(field: keyof PublishStats): void {
    this.stats[field]++;
  }

  private announce(): void {
    const client = this.client;
    if (!client || this.down || client.status !== 'ready') return;
    const live = [...this.sessions.values()].filter((w) => w.live && !w.gaveUp);
    if (live.length === 0) return;
    const ttl = this.ttl();
    const sessions: Record<string, number> = {};
    for (const w of live) {
      sessions[w.id] = w.events;
      client.pexpire(this.keys.stream(w.id), ttl).catch(() => undefined);
      client.pexpire(this.keys.epoch(w.id), ttl).catch(() => undefined);
    }
    client.xadd(this.keys.directory, 'MINID', '~', this.minId(), '*', 's', '', 'k', 'alive', 'e', '', 'd', JSON.stringify({ sessions })).catch(() => undefined);
  }

  async close(): Promise<PublishStats> {
    if (this.closed) return this.stats;
    this.closed = true;
    this.alive.unsubscribe();
    // A publisher opened a moment ago may still be loading its client: its entries wait for it.
    await this.loaded;
    for (const w of this.sessions.values()) if (w.live) w.end({ status: 'closed' });
    // Pending entries are waited for while Redis answers (or is still being reached for the
    // first time); when it is known to be away, they are given up at once.
    const status = this.client?.status;
    const reachable = status === 'ready' || ((status === 'connecting' || status === 'wait') && this.stats.outages === 0);
    if ((this.stats.pending > 0 || this.directory.length > 0) && reachable) {
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, this.closeTimeoutMs);
        this.idle = () => {
          clearTimeout(t);
          resolve();
        };
        this.wake();
      });
    }
    this.idle = undefined;
    this.retry?.unsubscribe();
    const gone = new SvcError('redis_unavailable', `the publisher to ${this.target} closed with entries Redis had not stored`, { retryable: true });
    for (const w of this.sessions.values()) if (w.queue.length > 0) w.abandon(w.error ?? gone);
    this.writers.clear();
    if (this.client && !this.options.redis) {
      const c = this.client;
      await c.quit().catch(() => c.disconnect());
    }
    return this.stats;
  }
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
 *   written when it is back. `onRedisError` is told once per outage; `stats.unpublished`
 *   counts what will never be stored, and each session's `settled` report says it.
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
 * const { unpublished } = await publisher.close();
 * ```
 */
export async function createPublisher(options: PublisherOptions = {}): Promise<Publisher> {
  const target = options.redis ? 'the given Redis client' : redactRedisUrl(publishUrl(options));
  const client = options.redis ? Promise.resolve(options.redis) : openRedis(publishUrl(options), 'publishing to Redis', { connectionName: 'svc-stream:publisher' });
  const core = new PublisherCore(options, target, client);
  await client;
  return core;
}

/** A publisher whose connection may still be loading (internal: `publishSession` with a `url`). */
export function startPublisher(options: PublisherOptions): Publisher {
  const target = options.redis ? 'the given Redis client' : redactRedisUrl(publishUrl(options));
  const client = options.redis ? Promise.resolve(options.redis) : openRedis(publishUrl(options), 'publishing to Redis', { connectionName: 'svc-stream:publisher' });
  client.catch(() => undefined);
  return new PublisherCore(options, target, client);
}
