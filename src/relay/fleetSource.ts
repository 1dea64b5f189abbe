// The relay's sessions when it serves a fleet (`createRelay({ from })`): the directory and the
// streams of Redis, read by the process's one reader, written to each page as server-sent
// events whose ids every relay of the fleet understands. Loaded only with `from`.
import type { ServerResponse } from 'node:http';
import type { SchedulerLike } from 'rxjs';
import type { SvcError } from '../errors/index.js';
import type { DirectorySession } from '../fleet/FleetDirectory.js';
import { openFleetReader, type FleetReader, type FollowJoin } from '../fleet/streamReader.js';
import type { FollowSink, Follower, FollowStart } from '../fleet/StreamFollower.js';
import type { StreamEntry } from '../fleet/streamEntries.js';
import { parseRelayCursor, type RelayGap, type RelayReset, type RelaySessionInfo } from './protocol.js';
import { PageSocket } from './PageSocket.js';
import { sseMessage } from './sse.js';
import { ResultLabelSchema } from '../schema/resultLabel.js';

/** What the relay's options say about serving a fleet. */
export interface FleetSourceOptions {
  readonly from: string;
  readonly prefix?: string | undefined;
  readonly maxClientBufferBytes: number;
  readonly stallTimeoutMs: number;
  readonly keepEndedMs: number;
  readonly scheduler: SchedulerLike;
  readonly onRedisError?: ((error: SvcError) => void) | undefined;
}

/**
 * How a request for a session's events went. Every refusal comes before the headers: `open`
 * is called only for a page that gets something (the stream, or the end again).
 */
export type FleetJoin =
  | { readonly kind: 'not_found' }
  | { readonly kind: 'bad_cursor' }
  | { readonly kind: 'unavailable' }
  | { readonly kind: 'joined' };

/** The fleet side of a relay. */
export interface FleetSource {
  readonly reader: FleetReader;
  sessions(): RelaySessionInfo[];
  /**
   * Check the request and decide where the page starts (Redis is read first: a refusal is
   * still possible), then write the headers (`open`) and stream the session to `res`; a HEAD
   * request (`head`) gets the headers only.
   */
  join(id: string, lastEventId: string | undefined, res: ServerResponse, head: boolean, open: () => void): Promise<FleetJoin>;
  heartbeat(): void;
  close(): Promise<void>;
}

/** One page reading one session: entries written while its socket has room. */
class FleetPage implements FollowSink {
  follower: Follower | undefined;
  private finished = false;
  private readonly socket: PageSocket;

  /** What the directory knows of the session (read once the join is decided). */
  session: DirectorySession | undefined;

  constructor(
    private readonly source: FleetSourceImpl,
    private readonly res: ServerResponse,
    private readonly id: string,
    /** From the start of what is kept (no cursor): the first entry may not be the start, which names the status. */
    private fresh: boolean,
  ) {
    // Cut off when its socket stays full; it resumes from its cursor.
    this.socket = new PageSocket(res, source.options.stallTimeoutMs, source.options.scheduler, () => source.clientsDropped++);
  }

  /** The headers are out: take entries from `follower` until the end or the page leaves. */
  attach(follower: Follower): void {
    this.follower = follower;
    this.source.pages.add(this);
    this.source.joined(this.id);
    this.res.on('close', () => this.finish());
    follower.start();
  }

  /** What this run of entries wrote, sent in one write by `flush`. */
  private out = '';

  private write(text: string): void {
    this.out += text;
  }

  flush(): void {
    if (this.out === '' || this.finished) return;
    this.res.write(this.out);
    this.out = '';
  }

  entry(e: StreamEntry, cursor: string, note: { readonly reset?: RelayReset; readonly gap?: RelayGap }): boolean {
    if (this.finished) return false;
    if (note.reset) {
      this.write(sseMessage('reset', note.reset));
      this.fresh = true;
    }
    if (note.gap) this.write(sseMessage('gap', note.gap));
    // Joined past the session's start (trimmed): what the directory knows comes first.
    if (this.fresh && e.kind !== 'start' && this.session) {
      const label = this.session.label;
      this.write(sseMessage('status', { status: this.session.status, title: this.session.title, ...(label ? { label } : {}) }));
    }
    this.fresh = false;
    const frame = this.source.frame(e, cursor, this.session);
    if (frame !== undefined) this.write(frame);
    if (e.kind === 'end') {
      const last = this.out;
      this.out = '';
      this.finished = true;
      this.socket.stop();
      this.res.end(last);
      return false;
    }
    if (this.res.writableLength + this.out.length < this.source.options.maxClientBufferBytes) return true;
    this.flush();
    this.socket.waitForDrain(() => this.follower?.resume());
    return false;
  }

  failed(): void {
    this.res.destroy();
  }

  heartbeat(): void {
    this.socket.heartbeat(this.finished);
  }

  private finish(): void {
    this.finished = true;
    this.socket.stop();
    this.follower?.close();
    this.source.pages.delete(this);
    this.source.left(this.id);
  }

  close(): void {
    this.res.destroy();
  }
}

class FleetSourceImpl implements FleetSource {
  readonly pages = new Set<FleetPage>();
  private readonly clients = new Map<string, number>();
  private readonly frames = new WeakMap<StreamEntry, string>();
  clientsDropped = 0;

  constructor(
    readonly options: FleetSourceOptions,
    readonly reader: FleetReader,
  ) {}

  /** The SSE message of an entry (built once, shared by every page that reads it from the tail). */
  frame(e: StreamEntry, cursor: string, session: DirectorySession | undefined): string | undefined {
    const cached = this.frames.get(e);
    if (cached !== undefined) return cached;
    // Entries are JSON written by JSON.stringify, with no raw line break; anything else is not ours.
    if (e.data.includes('\n') || e.data.includes('\r')) return undefined;
    let frame: string;
    const id = `id: ${cursor}\n`;
    if (e.kind === 'event') frame = `${id}event: event\ndata: ${e.data}\n\n`;
    else if (e.kind === 'end') frame = `${id}event: end\ndata: ${e.data}\n\n`;
    else {
      let data: { status?: unknown; title?: unknown; label?: unknown };
      try {
        data = JSON.parse(e.data) as typeof data;
      } catch {
        return undefined;
      }
      const title = typeof data.title === 'string' ? data.title : session?.title ?? '';
      const status = typeof data.status === 'string' ? data.status : 'connecting';
      // The label as the publisher wrote it (status entries carry it once known); an unreadable one is left out.
      const label = data.label === undefined ? undefined : ResultLabelSchema.safeParse(data.label);
      frame = `${id}event: status\ndata: ${JSON.stringify({ status, title, ...(label?.success ? { label: label.data } : {}) })}\n\n`;
    }
    this.frames.set(e, frame);
    return frame;
  }

  sessions(): RelaySessionInfo[] {
    return this.reader.sessions().map((s) => {
      const stale = this.reader.isStale(s);
      return {
        id: s.id,
        title: s.title,
        status: s.status,
        events: s.events,
        ended: s.ended,
        clients: this.clients.get(s.id) ?? 0,
        ...(s.startedAt !== undefined ? { startedAt: s.startedAt } : {}),
        ...(s.endedAt !== undefined ? { endedAt: s.endedAt } : {}),
        ...(stale ? { stale } : {}),
        ...(s.error ? { error: s.error } : {}),
        ...(s.label ? { label: s.label } : {}),
      };
    });
  }

  left(id: string): void {
    const n = (this.clients.get(id) ?? 1) - 1;
    if (n <= 0) this.clients.delete(id);
    else this.clients.set(id, n);
  }

  joined(id: string): void {
    this.clients.set(id, (this.clients.get(id) ?? 0) + 1);
  }

  async join(id: string, lastEventId: string | undefined, res: ServerResponse, head: boolean, open: () => void): Promise<FleetJoin> {
    let from: FollowStart | undefined;
    if (lastEventId !== undefined && lastEventId !== '') {
      const c = parseRelayCursor(lastEventId);
      if (!c || c.streamId === undefined) return { kind: 'bad_cursor' };
      from = { epoch: c.epoch, seq: c.seq, streamId: c.streamId, cursor: lastEventId };
    }
    // Redis is known to be away: refused now (503, Retry-After), before any header.
    if (!this.reader.connected) return { kind: 'unavailable' };
    const page = new FleetPage(this, res, id, from === undefined);
    let joined: FollowJoin;
    try {
      joined = await this.reader.follow(id, head ? undefined : from, page);
    } catch {
      return { kind: 'unavailable' };
    }
    if (joined.kind === 'not_found') return joined;
    const follower = joined.kind === 'follow' ? joined.follower : undefined;
    if (res.destroyed || head) {
      // The page left while Redis was read, or asked for the headers only.
      follower?.close();
      if (!res.destroyed) {
        open();
        res.end();
      }
      return { kind: 'joined' };
    }
    open();
    if (joined.kind === 'ended') {
      // The cursor is the session's end: the page has everything; it is told the end again.
      res.end(this.frame(joined.end, joined.end.cursor, undefined));
      return { kind: 'joined' };
    }
    page.session = this.reader.session(id);
    page.attach(follower!);
    return { kind: 'joined' };
  }

  heartbeat(): void {
    for (const p of this.pages) p.heartbeat();
  }

  async close(): Promise<void> {
    for (const p of [...this.pages]) p.close();
    await this.reader.close();
  }
}

/** Open the fleet side of a relay: its reader on `from`. */
export async function openFleetSource(options: FleetSourceOptions): Promise<FleetSource> {
  const reader = await openFleetReader({
    url: options.from,
    prefix: options.prefix,
    keepEndedMs: options.keepEndedMs,
    scheduler: options.scheduler,
    onRedisError: options.onRedisError,
  });
  return new FleetSourceImpl(options, reader);
}
