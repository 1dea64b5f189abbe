// The fleet's reader, one per relay process: the directory of sessions, and each followed
// session's stream read by one blocking XREAD over every followed stream at once, kept as a
// bounded tail in memory and fanned out to any number of followers. A follower that is behind
// the tail pages through the stream on the shared command connection, never a connection of its own.
import type { Redis } from 'ioredis';
import { asyncScheduler, interval, Subject, type Observable, type SchedulerLike, type Subscription } from 'rxjs';
import type { SvcError } from '../errors.js';
import { positiveOption } from '../internal/positiveOption.js';
import { callUser } from '../internal/userCallback.js';
import type { RelayGap, RelayReset } from '../schema/relay.js';
import { checkRedisUrl, openRedis, redactRedisUrl, redisError } from './redisConnection.js';
import {
  decodeDirectoryEntry,
  decodeEntry,
  DEFAULT_STREAM_PREFIX,
  fleetKeys,
  parseStreamId,
  type DirectoryEntry,
  type FleetKeys,
  type StreamEntry,
} from './streamEntries.js';

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

/** One session as the directory knows it. */
export interface DirectorySession {
  readonly id: string;
  epoch: string;
  title: string;
  status: string;
  startedAt: number | undefined;
  endedAt: number | undefined;
  events: number;
  ended: boolean;
  error: { readonly code: string; readonly message: string } | undefined;
  /** When this reader last heard of it (its clock). */
  heardAt: number;
}

/** A stream id as numbers: where a follower is (it takes what comes after), or a tail's floor. */
interface Position {
  ms: number;
  seq: number;
}

const before = (a: Position, b: Position): boolean => a.ms < b.ms || (a.ms === b.ms && a.seq < b.seq);
const idOf = (p: Position): string => `${p.ms}-${p.seq}`;
const positionOf = (id: string): Position => parseStreamId(id) ?? { ms: 0, seq: 0 };

/** What a follower is given: each entry in order, with a `reset` or `gap` before it when there is one. Return false to pause (call `resume()` later). */
export interface FollowSink {
  entry(entry: StreamEntry, cursor: string, note: { readonly reset?: RelayReset; readonly gap?: RelayGap }): boolean;
  /** The end of a run of entries: what the sink held back may be written now (one write per run, not per entry). */
  flush?(): void;
  /** The session could not be read (Redis away longer than the follower waits): optional. */
  failed?(error: SvcError): void;
}

/** A reader of one session for one follower; see {@link FleetReader.follow}. */
export interface Follower {
  /** Take entries again after the sink returned false. */
  resume(): void;
  /** Stop following. */
  close(): void;
}

const START: Position = { ms: 0, seq: 0 };

/** A followed stream: the tail read by the blocking reader, and its followers. */
class Feed {
  /** Every entry with id in (floor, lastId] is in `tail`, in order. */
  tail: StreamEntry[] = [];
  floor: Position = START;
  lastId = '0-0';
  private bytes = 0;
  ready: Promise<void> | undefined;
  /** True once `init` read the newest entries: the blocking read names this stream from `lastId` on. */
  loaded = false;
  /** Bumped by `resync`, so a blocking read sent before it is not applied after it. */
  generation = 0;
  /** The epoch of the newest entry read (undefined before any). */
  epoch: string | undefined;
  readonly followers = new Set<FollowerImpl>();
  linger: Subscription | undefined;

  constructor(
    readonly reader: FleetReaderImpl,
    readonly id: string,
    readonly key: string,
  ) {}

  /** Read the newest entries (up to the tail's size) so followers near the end are served from memory. */
  init(): Promise<void> {
    return (this.ready ??= (async () => {
      const n = this.reader.tailEntries;
      const rows = (await this.reader.cmd.xrevrange(this.key, '+', '-', 'COUNT', n)) as [string, string[]][];
      const entries = rows.reverse().map(([id, fields]) => decodeEntry(id, fields)).filter((e): e is StreamEntry => e !== undefined);
      this.tail = [];
      this.bytes = 0;
      if (rows.length >= n && entries.length > 0) {
        // The oldest row marks the floor: the tail holds what comes after it.
        this.floor = entries[0]!;
        entries.shift();
      } else this.floor = START;
      for (const e of entries) this.push(e);
      this.lastId = rows.length > 0 ? rows[rows.length - 1]![0] : this.lastId;
      if (rows.length === 0) this.lastId = '0-0';
      this.epoch = this.tail.at(-1)?.epoch ?? this.epoch;
      this.loaded = true;
      this.reader.wakeLoop();
    })());
  }

  private push(e: StreamEntry): void {
    this.tail.push(e);
    this.bytes += e.data.length + 64;
    while (this.tail.length > 1 && (this.tail.length > this.reader.tailEntries || this.bytes > this.reader.tailBytes)) {
      const old = this.tail.shift()!;
      this.bytes -= old.data.length + 64;
      this.floor = old;
    }
  }

  /** Entries the blocking read brought. */
  append(rows: readonly [string, string[]][]): void {
    for (const [id, fields] of rows) {
      this.lastId = id;
      const e = decodeEntry(id, fields);
      if (!e) continue;
      this.epoch = e.epoch;
      this.push(e);
    }
    for (const f of [...this.followers]) f.pump();
  }

  /** The directory says the stream started again in `epoch` (a new run replaced it): read it afresh. */
  resync(epoch: string): void {
    if (this.epoch === undefined || this.epoch === epoch) return;
    this.ready = undefined;
    this.loaded = false;
    this.generation++;
    this.tail = [];
    this.bytes = 0;
    this.floor = START;
    this.lastId = '0-0';
    for (const f of this.followers) f.restartFromStart();
    this.load();
  }

  /** Read the tail, then bring the followers along; while Redis is away, again until it works. */
  load(): void {
    this.init().then(
      () => {
        for (const f of [...this.followers]) f.pump();
      },
      () => {
        this.ready = undefined;
        const t = setTimeout(() => {
          if (this.ready === undefined && this.reader.feedOf(this.id) === this) this.load();
        }, 250);
        t.unref();
      },
    );
  }

  /** The index in `tail` of the first entry after `p`, or undefined when the tail does not reach back that far. */
  indexAfter(p: Position): number | undefined {
    if (before(p, this.floor)) return undefined;
    // Binary search for the first entry past `p`.
    let lo = 0;
    let hi = this.tail.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (before(p, this.tail[mid]!)) hi = mid;
      else lo = mid + 1;
    }
    return lo;
  }
}

function restartedStart(e: StreamEntry): boolean {
  if (e.kind !== 'start') return true; // the new epoch's start was trimmed: the stream was lost long ago
  try {
    return (JSON.parse(e.data) as { restarted?: unknown }).restarted === true;
  } catch {
    return false;
  }
}

class FollowerImpl implements Follower {
  private position: Position;
  private epoch: string | undefined;
  private seq = 0;
  private cursor = '';
  private paused = false;
  private fetching = false;
  private closed = false;
  private pendingReset: RelayReset | undefined;
  private ending = false;

  constructor(
    private readonly feed: Feed,
    private readonly sink: FollowSink,
    start: { readonly epoch: string; readonly seq: number; readonly streamId: string; readonly cursor: string } | undefined,
    reset: RelayReset | undefined,
    /** Without a cursor: just before the oldest entry Redis keeps. */
    beforeFirst: Position | undefined,
  ) {
    if (start) {
      this.position = positionOf(start.streamId);
      this.epoch = start.epoch;
      this.seq = start.seq;
      this.cursor = start.cursor;
    } else {
      this.position = beforeFirst ?? START;
      // A reset decided at join: the follower starts at the oldest entry kept, and says why first.
      this.pendingReset = reset;
    }
  }

  /** The stream was replaced: take it from its start (the first entry's epoch tells the sink to reset). */
  restartFromStart(): void {
    this.position = START;
  }

  resume(): void {
    this.paused = false;
    this.pump();
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.feed.reader.unfollow(this.feed, this);
  }

  /** Deliver one entry; false when the sink wants no more for now. */
  private deliver(e: StreamEntry): boolean {
    this.position = e;
    let note: { reset?: RelayReset; gap?: RelayGap } = {};
    if (this.pendingReset) {
      note = { reset: this.pendingReset };
      this.pendingReset = undefined;
    } else if (this.epoch !== undefined && e.epoch !== this.epoch) {
      note = { reset: { reason: restartedStart(e) ? 'lost' : 'replaced', after: this.cursor } };
    } else if (this.epoch === e.epoch) {
      if (e.seq <= this.seq) return true; // already delivered (a stream read again after a resync)
      if (e.seq > this.seq + 1) note = { gap: { after: this.cursor, next: e.cursor, missed: e.seq - this.seq - 1 } };
    }
    this.epoch = e.epoch;
    this.seq = e.seq;
    this.cursor = e.cursor;
    if (e.kind === 'end') this.ending = true;
    const more = this.sink.entry(e, this.cursor, note);
    if (this.ending) {
      this.sink.flush?.();
      this.close();
    }
    return more;
  }

  pump(): void {
    if (this.closed || this.paused || this.fetching) return;
    // A feed being (re)read brings its followers along when it is ready.
    if (this.feed.ready === undefined) return;
    const first = this.feed.indexAfter(this.position);
    if (first === undefined) return void this.fetch();
    const tail = this.feed.tail;
    for (let i = first; i < tail.length; i++) {
      if (!this.deliver(tail[i]!)) {
        this.paused = true;
        break;
      }
      if (this.closed) return;
    }
    this.sink.flush?.();
  }

  /** Behind the tail: read the next page from Redis on the shared connection. */
  private fetch(): void {
    this.fetching = true;
    const reader = this.feed.reader;
    const from = this.position.ms === 0 && this.position.seq === 0 ? '-' : `(${idOf(this.position)}`;
    reader.stats.pages++;
    reader.cmd.xrange(this.feed.key, from, '+', 'COUNT', reader.pageEntries).then(
      (rows) => {
        this.fetching = false;
        if (this.closed) return;
        let more = true;
        for (const [id, fields] of rows as [string, string[]][]) {
          const e = decodeEntry(id, fields);
          if (!e) {
            this.position = positionOf(id);
            continue;
          }
          if (!this.deliver(e)) {
            more = false;
            this.paused = true;
            break;
          }
          if (this.closed) return;
        }
        if (rows.length === 0) {
          // Nothing after the position in Redis: the tail will bring what comes next.
          if (before(this.position, this.feed.floor)) this.position = this.feed.floor;
        }
        this.sink.flush?.();
        if (more) this.pump();
      },
      (err: unknown) => {
        this.fetching = false;
        if (this.closed) return;
        // Redis is away: try again when it is back (the reader's loop wakes the followers).
        reader.waitForRedis(this, err);
      },
    );
  }
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
   * of what is kept. Resolves once the position is checked: a cursor the stream no longer has
   * (trimmed, or another epoch) starts from the oldest entry kept with a `reset` first.
   */
  follow(id: string, from: { readonly epoch: string; readonly seq: number; readonly streamId: string; readonly cursor: string } | undefined, sink: FollowSink): Promise<Follower>;
  /** Whether session `id` has a stream in Redis now. Rejects when Redis is away. */
  exists(id: string): Promise<boolean>;
  /** Whether Redis answers now. */
  readonly connected: boolean;
  /** The Redis it reads, without a password. */
  readonly target: string;
  /** Counters. */
  readonly stats: Readonly<FleetReaderStats>;
  close(): Promise<void>;
}

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

class FleetReaderImpl implements FleetReader {
  readonly keys: FleetKeys;
  readonly tailEntries: number;
  readonly tailBytes: number;
  readonly pageEntries: number;
  private readonly blockMs: number;
  private readonly staleMs: number;
  private readonly keepEndedMs: number;
  private readonly lingerMs: number;
  private readonly now: () => number;
  private readonly scheduler: SchedulerLike;
  private readonly directory = new Map<string, DirectorySession>();
  private directoryLast = '0-0';
  private readonly feeds = new Map<string, Feed>();
  private readonly changes = new Subject<string>();
  readonly changes$ = this.changes.asObservable();
  readonly stats: FleetReaderStats = { streams: 0, reads: 0, pages: 0, outages: 0 };
  private blockingId: number | undefined;
  private blocked = false;
  private feedsVersion = 0;
  private inflightVersion = 0;
  private wake: (() => void) | undefined;
  private closed = false;
  private down = false;
  private readonly waiting = new Set<FollowerImpl>();
  private readonly sweep: Subscription;
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
    this.blockMs = positiveOption('fleet reader', 'blockMs', options.blockMs, 5000);
    this.staleMs = positiveOption('fleet reader', 'staleMs', options.staleMs, 45_000);
    this.keepEndedMs = positiveOption('fleet reader', 'keepEndedMs', options.keepEndedMs, 600_000);
    this.lingerMs = positiveOption('fleet reader', 'lingerMs', options.lingerMs, 30_000);
    this.now = options.now ?? Date.now;
    this.scheduler = options.scheduler ?? asyncScheduler;
    let lastError: unknown;
    for (const c of [cmd, blocking]) {
      c.on('error', (err: unknown) => (lastError = err));
      c.on('close', () => this.wentDown(lastError));
    }
    cmd.on('ready', () => this.cameUp());
    blocking.on('ready', () => {
      blocking.client('ID').then(
        (id) => {
          this.blockingId = Number(id);
          this.wakeLoop();
        },
        () => undefined,
      );
    });
    blocking.on('close', () => (this.blockingId = undefined));
    this.sweep = interval(Math.min(this.staleMs, 10_000), this.scheduler).subscribe(() => this.sweepDirectory());
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

  waitForRedis(follower: FollowerImpl, err: unknown): void {
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
    this.loopDone = this.loop();
  }

  private async loadDirectory(): Promise<void> {
    let from = '-';
    for (;;) {
      const rows = (await this.cmd.xrange(this.keys.directory, from, '+', 'COUNT', 1000)) as [string, string[]][];
      for (const [id, fields] of rows) this.onDirectory(id, fields, true);
      if (rows.length < 1000) return;
      from = `(${rows[rows.length - 1]![0]}`;
    }
  }

  private onDirectory(id: string, fields: readonly string[], loading: boolean): void {
    this.directoryLast = id;
    const d = decodeDirectoryEntry(id, fields);
    if (!d) return;
    // While loading history, "heard" is when the publisher wrote it; live, it is now.
    const heard = loading ? Number(id.split('-')[0]) : this.now();
    if (d.kind === 'alive') {
      const list = (d.info as { sessions?: unknown }).sessions;
      if (list === null || typeof list !== 'object') return;
      for (const [sid, events] of Object.entries(list as Record<string, unknown>)) {
        let s = this.directory.get(sid);
        // Live for longer than the directory keeps: known from here on by its liveness alone.
        if (!s) {
          s = { id: sid, epoch: '', title: sid, status: 'streaming', startedAt: undefined, endedAt: undefined, events: 0, ended: false, error: undefined, heardAt: heard };
          this.directory.set(sid, s);
        }
        if (s.ended) continue;
        s.heardAt = Math.max(s.heardAt, heard);
        if (typeof events === 'number') s.events = events;
        if (!loading) this.changes.next(sid);
      }
      return;
    }
    this.apply(d, heard);
    if (!loading) this.changes.next(d.session);
  }

  private apply(d: DirectoryEntry, heard: number): void {
    let s = this.directory.get(d.session);
    const info = d.info;
    if (d.kind === 'start' || !s) {
      const replaced = s !== undefined && s.epoch !== d.epoch;
      s = {
        id: d.session,
        epoch: d.epoch,
        title: typeof info.title === 'string' ? info.title : s?.title ?? d.session,
        status: typeof info.status === 'string' ? info.status : 'connecting',
        startedAt: typeof info.startedAt === 'number' ? info.startedAt : s?.startedAt,
        endedAt: undefined,
        events: typeof info.events === 'number' ? info.events : 0,
        ended: false,
        error: undefined,
        heardAt: heard,
      };
      // Re-inserted, so the map keeps the order sessions (re)started in.
      this.directory.delete(d.session);
      this.directory.set(d.session, s);
      if (replaced) this.feeds.get(d.session)?.resync(d.epoch);
      if (d.kind === 'start') return;
    }
    if (s.epoch === '') s.epoch = d.epoch;
    if (d.epoch !== s.epoch) return; // a late note of an earlier run
    s.heardAt = Math.max(s.heardAt, heard);
    if (typeof info.events === 'number') s.events = info.events;
    if (d.kind === 'status' && typeof info.status === 'string' && !s.ended) s.status = info.status;
    if (d.kind === 'end') {
      s.ended = true;
      s.endedAt = heard;
      s.status = typeof info.status === 'string' ? info.status : 'done';
      s.error = info.error;
    }
  }

  isStale(s: DirectorySession): boolean {
    return !s.ended && this.now() - s.heardAt > this.staleMs;
  }

  private sweepDirectory(): void {
    const now = this.now();
    for (const s of [...this.directory.values()]) {
      const quietFor = now - (s.ended ? s.endedAt ?? s.heardAt : s.heardAt);
      if (quietFor > this.keepEndedMs + (s.ended ? 0 : this.staleMs)) {
        this.directory.delete(s.id);
        this.changes.next(s.id);
      } else if (!s.ended && quietFor > this.staleMs && quietFor <= this.staleMs + Math.min(this.staleMs, 10_000)) {
        this.changes.next(s.id); // just went stale
      }
    }
  }

  sessions(): DirectorySession[] {
    return [...this.directory.values()];
  }

  session(id: string): DirectorySession | undefined {
    return this.directory.get(id);
  }

  feedOf(id: string): Feed | undefined {
    return this.feeds.get(id);
  }

  async exists(id: string): Promise<boolean> {
    return (await this.cmd.exists(this.keys.stream(id))) > 0;
  }

  wakeLoop(): void {
    const w = this.wake;
    this.wake = undefined;
    w?.();
    this.feedsVersion++;
    this.unblock();
  }

  /**
   * A blocking read that does not name a new stream is cut short, so the next one does. The
   * UNBLOCK may reach Redis before the read it means to cut: then it is sent again shortly.
   */
  private unblock(): void {
    if (!this.blocked || this.blockingId === undefined || this.inflightVersion >= this.feedsVersion) return;
    const read = this.stats.reads;
    this.cmd.client('UNBLOCK', this.blockingId).catch(() => undefined);
    setTimeout(() => {
      if (this.stats.reads === read) this.unblock();
    }, 100).unref();
  }

  private async loop(): Promise<void> {
    let backoff = 50;
    while (!this.closed) {
      if (this.blocking.status !== 'ready' || this.blockingId === undefined) {
        await new Promise<void>((resolve) => {
          this.wake = resolve;
          setTimeout(resolve, 1000).unref();
        });
        continue;
      }
      this.inflightVersion = this.feedsVersion;
      const feeds = [...this.feeds.values()].filter((f) => f.loaded);
      const generations = new Map(feeds.map((f) => [f, f.generation]));
      const keys = [this.keys.directory, ...feeds.map((f) => f.key)];
      const ids = [this.directoryLast, ...feeds.map((f) => f.lastId)];
      let result: [string, [string, string[]][]][] | null;
      try {
        this.blocked = true;
        this.stats.reads++;
        result = (await this.blocking.xread('COUNT', 1000, 'BLOCK', this.blockMs, 'STREAMS', ...keys, ...ids)) as [string, [string, string[]][]][] | null;
        backoff = 50;
      } catch (err) {
        this.blocked = false;
        if (this.closed) return;
        this.wentDown(err);
        await new Promise((r) => setTimeout(r, backoff).unref());
        backoff = Math.min(backoff * 2, 2000);
        continue;
      } finally {
        this.blocked = false;
      }
      if (this.down && this.cmd.status === 'ready') this.cameUp();
      if (!result) continue;
      for (const [key, rows] of result) {
        if (key === this.keys.directory) {
          for (const [id, fields] of rows) this.onDirectory(id, fields, false);
          continue;
        }
        const id = this.keys.idOf(key);
        const feed = id === undefined ? undefined : this.feeds.get(id);
        if (feed && generations.get(feed) === feed.generation) feed.append(rows);
      }
    }
  }

  async follow(id: string, from: { readonly epoch: string; readonly seq: number; readonly streamId: string; readonly cursor: string } | undefined, sink: FollowSink): Promise<Follower> {
    let feed = this.feeds.get(id);
    if (!feed) {
      feed = new Feed(this, id, this.keys.stream(id));
      this.feeds.set(id, feed);
      this.stats.streams = this.feeds.size;
    }
    feed.linger?.unsubscribe();
    feed.linger = undefined;
    let follower: FollowerImpl | undefined;
    try {
      let start = from;
      let reset: RelayReset | undefined;
      // Where the stream starts now: a cursor before it was trimmed, and a page from the start
      // starts there (not earlier, from this relay's memory: every relay starts a page alike).
      const first = ((await this.cmd.xrange(feed.key, '-', '+', 'COUNT', 1)) as [string, string[]][])[0];
      const e = first ? decodeEntry(first[0], first[1]) : undefined;
      const known = this.directory.get(id)?.epoch;
      if (from) {
        if (e && e.epoch !== from.epoch) reset = { reason: restartedStart(e) ? 'lost' : 'replaced', after: from.cursor };
        else if (e && e.seq > from.seq + 1) reset = { reason: 'trimmed', after: from.cursor };
        else if (!e && known !== undefined && known !== '' && known !== from.epoch) reset = { reason: 'lost', after: from.cursor };
        if (reset) start = undefined;
      }
      follower = new FollowerImpl(feed, sink, start, reset, start === undefined && e ? { ms: e.ms, seq: e.seq - 1 } : undefined);
      feed.followers.add(follower);
      await feed.init().catch((err: unknown) => {
        feed.ready = undefined;
        throw err;
      });
    } catch (err) {
      // Redis went away meanwhile: nothing of this follower stays (the feed lingers, then goes).
      if (follower) follower.close();
      else this.unfollow(feed, undefined);
      throw err;
    }
    follower.pump();
    return follower;
  }

  unfollow(feed: Feed, follower: FollowerImpl | undefined): void {
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
    this.sweep.unsubscribe();
    for (const f of this.feeds.values()) f.linger?.unsubscribe();
    this.changes.complete();
    this.wake?.();
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
