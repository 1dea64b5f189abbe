// One follower of a followed stream (one page of a relay): where it is, what it was last given
// (epoch, number, cursor), and the reset or gap it is told before an entry. Served from the
// stream's tail while it is near the end; paged from Redis on the shared connection when behind.
import type { SvcError } from '../errors/index.js';
import type { RelayGap, RelayReset } from '../schema/relay.js';
import { before, idOf, positionOf, START, type FollowedStream, type Position, type TailFollower } from './FollowedStream.js';
import { decodeEntry, type StreamEntry } from './streamEntries.js';

/** What a follower is given: each entry in order, with a `reset` or `gap` before it when there is one. Return false to pause (call `resume()` later). */
export interface FollowSink {
  entry(entry: StreamEntry, cursor: string, note: { readonly reset?: RelayReset; readonly gap?: RelayGap }): boolean;
  /** The end of a run of entries: what the sink held back may be written now (one write per run, not per entry). */
  flush?(): void;
  /** The session could not be read (Redis away longer than the follower waits): optional. */
  failed?(error: SvcError): void;
}

/** A reader of one session for one follower; see `FleetReader.follow`. */
export interface Follower {
  /** Start giving the sink entries (not before: a page's headers go first). */
  start(): void;
  /** Take entries again after the sink returned false. */
  resume(): void;
  /** Stop following. */
  close(): void;
}

/** Where a follower starts: the cursor it gave, read. */
export interface FollowStart {
  readonly epoch: string;
  readonly seq: number;
  readonly streamId: string;
  readonly cursor: string;
}

/**
 * Why a follower in another epoch is reset when `first` is the first entry of the stream now:
 * `lost` when that run started over after its stream was lost (or its start was trimmed long
 * ago), `replaced` when a new run took the id.
 */
export function resetReason(first: StreamEntry): 'lost' | 'replaced' {
  if (first.kind !== 'start') return 'lost'; // the new epoch's start was trimmed: the stream was lost long ago
  try {
    return (JSON.parse(first.data) as { restarted?: unknown }).restarted === true ? 'lost' : 'replaced';
  } catch {
    return 'replaced';
  }
}

export class StreamFollower implements Follower, TailFollower {
  private position: Position;
  private epoch: string | undefined;
  private seq = 0;
  private cursor = '';
  private paused = false;
  private started = false;
  private fetching = false;
  private closed = false;
  private pendingReset: RelayReset | undefined;
  private ending = false;

  constructor(
    private readonly stream: FollowedStream,
    private readonly sink: FollowSink,
    start: FollowStart | undefined,
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

  start(): void {
    this.started = true;
    this.pump();
  }

  resume(): void {
    this.paused = false;
    this.pump();
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.stream.host.unfollow(this.stream, this);
  }

  /** Deliver one entry; false when the sink wants no more for now. */
  private deliver(e: StreamEntry): boolean {
    this.position = e;
    let note: { reset?: RelayReset; gap?: RelayGap } = {};
    if (this.pendingReset) {
      note = { reset: this.pendingReset };
      this.pendingReset = undefined;
    } else if (this.epoch !== undefined && e.epoch !== this.epoch) {
      note = { reset: { reason: resetReason(e), after: this.cursor } };
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
    if (this.closed || !this.started || this.paused || this.fetching) return;
    // A stream being (re)read brings its followers along when it is ready.
    if (this.stream.ready === undefined) return;
    const first = this.stream.indexAfter(this.position);
    if (first === undefined) return void this.fetch();
    const tail = this.stream.tail;
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
    const host = this.stream.host;
    const from = this.position.ms === 0 && this.position.seq === 0 ? '-' : `(${idOf(this.position)}`;
    host.stats.pages++;
    host.cmd.xrange(this.stream.key, from, '+', 'COUNT', host.pageEntries).then(
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
          if (before(this.position, this.stream.floor)) this.position = this.stream.floor;
        }
        this.sink.flush?.();
        if (more) this.pump();
      },
      (err: unknown) => {
        this.fetching = false;
        if (this.closed) return;
        // Redis is away: try again when it is back (the reader's loop wakes the followers).
        host.waitForRedis(this, err);
      },
    );
  }
}
