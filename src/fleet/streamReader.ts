// The fleet's reader, one per relay process: the directory of sessions, and each followed
// session's stream read by one blocking XREAD over every followed stream at once, kept as a
// bounded tail in memory and fanned out to any number of followers. A follower that is behind
// the tail pages through the stream on the shared command connection, never a connection of its own.
// This file owns the two connections, what is followed and what each read names; the blocking
// read (BlockingRead.ts), the directory (FleetDirectory.ts), a followed stream's tail
// (FollowedStream.ts) and one follower (StreamFollower.ts) are their own.
import type { Redis } from 'ioredis';
import { asyncScheduler, type Observable, type SchedulerLike, type Subscription } from 'rxjs';
import type { SvcError } from '../errors/index.js';
import { positiveOption } from '../internal/positiveOption.js';
import { callUser } from '../internal/userCallback.js';
import { BlockingRead, type ReadPlan } from './BlockingRead.js';
import { FleetDirectory, type DirectorySession } from './FleetDirectory.js';
import { FollowedStream, type StreamHost, type TailFollower } from './FollowedStream.js';
import { checkRedisUrl, openRedis, redactRedisUrl, redisError } from './redisConnection.js';
import { joinDecision } from './joinDecision.js';
import { decodeEntry, DEFAULT_STREAM_PREFIX, fleetKeys, type FleetKeys, type StreamEntry } from './streamEntries.js';
import { StreamFollower, type Follower, type FollowSink, type FollowStart } from './StreamFollower.js';

/** Options of {@link openFleetReader}. */
export interface FleetReaderOptions {
  /** Redis the sessions are published to (`redis://…`). */
  readonly url: string;
  /** The publishers' key prefix. Default `svc-stream`. */
  readonly prefix?: string | undefined;
  /** Entries of each followed stream kept in memory for followers. Default 2 000. */
  readonly tailEntries?: number | undefined;
  /** Bytes of each followed stream's tail. Default 2 MiB. */
  readonly tailBytes?: number | undefined;
  /** Entries one page of a follower's catch-up reads from Redis. Default 200. */
  readonly pageEntries?: number | undefined;
  /** The longest one blocking read waits before it is sent again. Default 5 000 ms. */
  readonly blockMs?: number | undefined;
  /** A live session whose publisher was not heard from this long is `stale`. Default 45 000 ms. */
  readonly staleMs?: number | undefined;
  /** How long an ended (or stale) session stays in the directory. Default 600 000 ms. */
  readonly keepEndedMs?: number | undefined;
  /** A followed stream nobody follows any more is dropped after this long (a page that reconnects finds it in memory). Default 30 000 ms. */
  readonly lingerMs?: number | undefined;
  /** Called once each time Redis becomes unreachable; the reader reconnects on its own. */
  readonly onRedisError?: ((error: SvcError) => void) | undefined;
  /** The clock (ms since the epoch). Default `Date.now`. */
  readonly now?: (() => number) | undefined;
  /** Scheduler of the sweep and linger timers. Default `asyncScheduler`. */
  readonly scheduler?: SchedulerLike | undefined;
}

/** The reader of one relay process; see {@link openFleetReader}. */
export interface FleetReader {
  /** The sessions of the directory (live, and ended or stale for `keepEndedMs`), oldest first. */
  sessions(): DirectorySession[];
  /** One session, if the directory knows it. */
  session(id: string): DirectorySession | undefined;
  /** Emits a session's id whenever the directory changed for it (hot). */
  readonly changes$: Observable<string>;
  /** True when this session's publisher was not heard from for `staleMs` while it was live. */
  isStale(session: DirectorySession): boolean;
  /**
   * Follow session `id` from a cursor (`EPOCH:MS-SEQ`, see `parseRelayCursor`) or from the start
   * of what is kept. Resolves once the position is decided and the stream's tail read (see
   * `joinDecision`): a follower not started yet (`start()` once the page's headers are out), the
   * session's `end` when the cursor names it, or `not_found`. A cursor the stream does not hold
   * starts from the oldest entry kept with a `reset` first. Rejects when Redis does not answer.
   */
  follow(id: string, from: FollowStart | undefined, sink: FollowSink): Promise<FollowJoin>;
  /** Whether Redis answers now. */
  readonly connected: boolean;
  /** The Redis it reads, without a password. */
  readonly target: string;
  /** Counters. */
  readonly stats: Readonly<FleetReaderStats>;
  close(): Promise<void>;
}

/** How a follow went: a follower (not started), the end the cursor named, or no such session. */
export type FollowJoin = { readonly kind: 'follow'; readonly follower: Follower } | { readonly kind: 'ended'; readonly end: StreamEntry } | { readonly kind: 'not_found' };

/** Counters of a {@link FleetReader}. */
export interface FleetReaderStats {
  /** Streams followed now (each read once, whatever the number of followers). */
  streams: number;
  /** Blocking reads sent. */
  reads: number;
  /** Catch-up pages read for followers behind the tail. */
  pages: number;
  /** Times Redis became unreachable. */
  outages: number;
}

class FleetReaderImpl implements FleetReader, StreamHost {
  readonly keys: FleetKeys;
  readonly tailEntries: number;
  readonly tailBytes: number;
  readonly pageEntries: number;
  private readonly lingerMs: number;
  private readonly scheduler: SchedulerLike;
  private readonly directory: FleetDirectory;
  readonly changes$: Observable<string>;
  private readonly feeds = new Map<string, FollowedStream>();
  readonly stats: FleetReaderStats = { streams: 0, reads: 0, pages: 0, outages: 0 };
  private readonly reads: BlockingRead;
  private closed = false;
  private down = false;
  private readonly waiting = new Set<TailFollower>();
  private loopDone: Promise<void> | undefined;

  constructor(
    private readonly options: FleetReaderOptions,
    readonly target: string,
    readonly cmd: Redis,
    private readonly blocking: Redis,
  ) {
    this.keys = fleetKeys(options.prefix ?? DEFAULT_STREAM_PREFIX);
    this.tailEntries = positiveOption('fleet reader', 'tailEntries', options.tailEntries, 2000);
    this.tailBytes = positiveOption('fleet reader', 'tailBytes', options.tailBytes, 2 << 20);
    this.pageEntries = positiveOption('fleet reader', 'pageEntries', options.pageEntries, 200);
    this.lingerMs = positiveOption('fleet reader', 'lingerMs', options.lingerMs, 30_000);
    this.scheduler = options.scheduler ?? asyncScheduler;
    this.directory = new FleetDirectory({
      staleMs: positiveOption('fleet reader', 'staleMs', options.staleMs, 45_000),
      keepEndedMs: positiveOption('fleet reader', 'keepEndedMs', options.keepEndedMs, 600_000),
      now: options.now ?? Date.now,
      scheduler: this.scheduler,
      replaced: (id, epoch) => this.feeds.get(id)?.resync(epoch),
    });
    this.changes$ = this.directory.changes$;
    let lastError: unknown;
    for (const c of [cmd, blocking]) {
      c.on('error', (err: unknown) => (lastError = err));
      c.on('close', () => this.wentDown(lastError));
    }
    cmd.on('ready', () => this.cameUp());
    this.reads = new BlockingRead(blocking, cmd, positiveOption('fleet reader', 'blockMs', options.blockMs, 5000), {
      plan: () => this.plan(),
      failed: (err) => this.wentDown(err),
      answered: () => {
        if (this.down && this.cmd.status === 'ready') this.cameUp();
      },
      stats: this.stats,
    });
  }

  get connected(): boolean {
    return this.cmd.status === 'ready' && this.blocking.status === 'ready';
  }

  private wentDown(err: unknown): void {
    if (this.closed || this.down) return;
    this.down = true;
    this.stats.outages++;
    callUser(this.options.onRedisError, redisError(err ?? new Error('connection closed'), `lost Redis at ${this.target}`));
  }

  private cameUp(): void {
    this.down = false;
    const waiting = [...this.waiting];
    this.waiting.clear();
    for (const f of waiting) f.pump();
    this.wakeLoop();
  }

  waitForRedis(follower: TailFollower, err: unknown): void {
    this.waiting.add(follower);
    if (this.cmd.status === 'ready') {
      // A command failed on a live connection: try again shortly.
      const t = setTimeout(() => {
        if (this.waiting.delete(follower)) follower.pump();
      }, 250);
      t.unref();
    } else this.wentDown(err);
  }

  /** Read the directory from its start (what retention keeps), then start the blocking loop. */
  async start(): Promise<void> {
    await this.loadDirectory().catch(() => undefined);
    this.loopDone = this.reads.run();
  }

  private async loadDirectory(): Promise<void> {
    let from = '-';
    for (;;) {
      const rows = (await this.cmd.xrange(this.keys.directory, from, '+', 'COUNT', 1000)) as [string, string[]][];
      for (const [id, fields] of rows) this.directory.read(id, fields, true);
      if (rows.length < 1000) return;
      from = `(${rows[rows.length - 1]![0]}`;
    }
  }

  isStale(s: DirectorySession): boolean {
    return this.directory.isStale(s);
  }

  sessions(): DirectorySession[] {
    return this.directory.sessions();
  }

  session(id: string): DirectorySession | undefined {
    return this.directory.session(id);
  }

  owns(stream: FollowedStream): boolean {
    return this.feeds.get(stream.id) === stream;
  }

  wakeLoop(): void {
    this.reads.wakeUp();
  }

  /** What the next blocking read names: the directory, then each stream whose tail is loaded, from where it is. */
  private plan(): ReadPlan {
    const feeds = [...this.feeds.values()].filter((f) => f.loaded);
    // A stream read afresh meanwhile (a new run of its id) takes nothing of this read.
    const generations = new Map(feeds.map((f) => [f, f.generation]));
    return {
      keys: [this.keys.directory, ...feeds.map((f) => f.key)],
      ids: [this.directory.lastId, ...feeds.map((f) => f.lastId)],
      apply: (result) => {
        for (const [key, rows] of result) {
          if (key === this.keys.directory) {
            for (const [id, fields] of rows) this.directory.read(id, fields, false);
            continue;
          }
          const id = this.keys.idOf(key);
          const feed = id === undefined ? undefined : this.feeds.get(id);
          if (feed && generations.get(feed) === feed.generation) feed.append(rows);
        }
      },
    };
  }

  async follow(id: string, from: FollowStart | undefined, sink: FollowSink): Promise<FollowJoin> {
    const key = this.keys.stream(id);
    // What the stream holds now: its oldest entry, and the entry the cursor names.
    const [firstRows, atRows] = await Promise.all([
      this.cmd.xrange(key, '-', '+', 'COUNT', 1) as Promise<[string, string[]][]>,
      from ? (this.cmd.xrange(key, from.streamId, from.streamId) as Promise<[string, string[]][]>) : Promise.resolve([]),
    ]);
    const first = firstRows[0] ? decodeEntry(firstRows[0][0], firstRows[0][1]) : undefined;
    const at = atRows[0] ? decodeEntry(atRows[0][0], atRows[0][1]) : undefined;
    const s = this.directory.session(id);
    const decision = joinDecision({ first, at }, from, s ? { live: !s.ended && !this.directory.isStale(s), epoch: s.epoch } : undefined);
    if (decision.kind !== 'follow') return decision;
    let feed = this.feeds.get(id);
    if (!feed) {
      feed = new FollowedStream(this, id, key);
      this.feeds.set(id, feed);
      this.stats.streams = this.feeds.size;
    }
    feed.linger?.unsubscribe();
    feed.linger = undefined;
    // Without a cursor (or reset), a page starts at the oldest entry Redis keeps, on every relay alike.
    const follower = new StreamFollower(feed, sink, decision.start, decision.reset, decision.start === undefined && first ? { ms: first.ms, seq: first.seq - 1 } : undefined);
    feed.followers.add(follower);
    try {
      await feed.init();
    } catch (err) {
      // Redis went away meanwhile: nothing of this follower stays (the feed lingers, then goes).
      feed.ready = undefined;
      follower.close();
      throw err;
    }
    return { kind: 'follow', follower };
  }

  unfollow(feed: FollowedStream, follower: TailFollower | undefined): void {
    if (follower) {
      feed.followers.delete(follower);
      this.waiting.delete(follower);
    }
    if (feed.followers.size > 0 || feed.linger) return;
    feed.linger = this.scheduler.schedule(() => {
      feed.linger = undefined;
      if (feed.followers.size === 0 && this.feeds.get(feed.id) === feed) {
        this.feeds.delete(feed.id);
        this.stats.streams = this.feeds.size;
      }
    }, this.lingerMs) as unknown as Subscription;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.directory.close();
    for (const f of this.feeds.values()) f.linger?.unsubscribe();
    this.reads.close();
    for (const c of [this.blocking, this.cmd]) c.disconnect();
    await this.loopDone;
    this.feeds.clear();
  }
}

/**
 * Open the reader of a relay process on the Redis sessions are published to: two connections
 * (one for the blocking read of every followed stream and the directory, one for everything
 * else), whatever the number of pages. Resolves once the directory is read (or Redis found
 * away: it reconnects on its own, and `onRedisError` is told). Rejects with
 * `missing_dependency` when ioredis is not installed.
 */
export async function openFleetReader(options: FleetReaderOptions): Promise<FleetReader> {
  const url = checkRedisUrl(options.url, 'from');
  const target = redactRedisUrl(url);
  const cmd = await openRedis(url, 'a relay reading Redis', { connectionName: 'svc-stream:relay' });
  const blockMs = positiveOption('fleet reader', 'blockMs', options.blockMs, 5000);
  const blocking = await openRedis(url, 'a relay reading Redis', { commandTimeout: blockMs + 10_000, connectionName: 'svc-stream:relay' });
  const reader = new FleetReaderImpl(options, target, cmd, blocking);
  if (cmd.status !== 'ready') await new Promise<void>((resolve) => {
    const done = (): void => {
      cmd.off('ready', done);
      cmd.off('close', done);
      resolve();
    };
    cmd.once('ready', done);
    cmd.once('close', done);
  });
  await reader.start();
  return reader;
}
