// One followed session's stream in a relay process: the bounded tail of its newest entries,
// read first by XREVRANGE and then fed by the reader's blocking read, and the followers it
// brings along. What it needs of the reader that owns it is the small `StreamHost` below.
import type { Subscription } from 'rxjs';
import { decodeEntry, parseStreamId, type StreamEntry } from './streamEntries.js';

/** A stream id as numbers: where a follower is (it takes what comes after), or a tail's floor. */
export interface Position {
  ms: number;
  seq: number;
}

export const START: Position = { ms: 0, seq: 0 };
export const before = (a: Position, b: Position): boolean => a.ms < b.ms || (a.ms === b.ms && a.seq < b.seq);
export const idOf = (p: Position): string => `${p.ms}-${p.seq}`;
export const positionOf = (id: string): Position => parseStreamId(id) ?? START;

/** What a followed stream asks of each of its followers. */
export interface TailFollower {
  /** Take what the tail has past your position (or page from Redis when behind it). */
  pump(): void;
  /** The stream was replaced: take it from its start. */
  restartFromStart(): void;
}

/**
 * The commands a followed stream and its followers send (on the reader's command connection).
 * Named here, not taken from ioredis, so the relay's declarations (which reach this file)
 * compile without ioredis installed.
 */
export interface TailCommands {
  xrevrange(key: string, end: string, start: string, countToken: 'COUNT', count: number): Promise<Array<[id: string, fields: string[]]>>;
  xrange(key: string, start: string, end: string, countToken: 'COUNT', count: number): Promise<Array<[id: string, fields: string[]]>>;
}

/** What a followed stream and its followers ask of the reader that owns them. */
export interface StreamHost {
  /** The shared command connection (never the blocking one). */
  readonly cmd: TailCommands;
  readonly tailEntries: number;
  readonly tailBytes: number;
  readonly pageEntries: number;
  readonly stats: { pages: number };
  /** A stream became ready to be named by the blocking read. */
  wakeLoop(): void;
  /** Whether `stream` is still the one the reader follows for its id. */
  owns(stream: FollowedStream): boolean;
  /** `follower` stopped (or, undefined, joining failed): the stream lingers once nobody follows it. */
  unfollow(stream: FollowedStream, follower: TailFollower | undefined): void;
  /** A page read failed: pump `follower` again when Redis answers. */
  waitForRedis(follower: TailFollower, err: unknown): void;
}

/** A followed stream: the tail read by the blocking reader, and its followers. */
export class FollowedStream {
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
  readonly followers = new Set<TailFollower>();
  linger: Subscription | undefined;

  constructor(
    readonly host: StreamHost,
    readonly id: string,
    readonly key: string,
  ) {}

  /** Read the newest entries (up to the tail's size) so followers near the end are served from memory. */
  init(): Promise<void> {
    return (this.ready ??= (async () => {
      const n = this.host.tailEntries;
      const rows = (await this.host.cmd.xrevrange(this.key, '+', '-', 'COUNT', n)) as [string, string[]][];
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
      this.host.wakeLoop();
    })());
  }

  private push(e: StreamEntry): void {
    this.tail.push(e);
    this.bytes += e.data.length + 64;
    while (this.tail.length > 1 && (this.tail.length > this.host.tailEntries || this.bytes > this.host.tailBytes)) {
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
          if (this.ready === undefined && this.host.owns(this)) this.load();
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
