// One session on the relay: its events numbered and kept in a bounded history, its status,
// and the pages reading it. Each page has a cursor into the history; a page that cannot keep
// up falls behind in the history (its socket never holds more than a bound), and past the
// history it is skipped ahead with a `gap` message.
import type { ServerResponse } from 'node:http';
import type { Observable, SchedulerLike, Subscription } from 'rxjs';
import { InputError } from '../errors/index.js';
import type { ServerEvent } from '../schema/events.js';
import { checkSessionId } from '../schema/sessionId.js';
import { isTerminalStatus, type SessionState } from '../schema/sessionState.js';
import { sameLabel, type ResultLabel } from '../schema/resultLabel.js';
import { statsOfState } from '../session/stats.js';
import { errorSummary, wireEvent, type RelayEnd, type RelaySessionInfo } from './protocol.js';
import { PageSocket } from './PageSocket.js';
import { sseMessage } from './sse.js';

/** The limits a session's history and its pages live within (see `RelayOptions`). */
export interface RelaySessionLimits {
  readonly historyEvents: number;
  readonly historyBytes: number;
  readonly maxClientBufferBytes: number;
  readonly stallTimeoutMs: number;
  readonly scheduler: SchedulerLike;
}

/** Counters of one session, updated in place. */
export interface RelaySessionCounters {
  /** Bytes written to pages for this session (event, status, gap and end messages). */
  bytesSent: number;
  /** Pages dropped because their socket stayed full for `stallTimeoutMs`. */
  clientsDropped: number;
  /** Times a page was skipped ahead over trimmed events (`gap` messages sent). */
  gaps: number;
  /** Events trimmed from the history to keep it within its bounds. */
  eventsTrimmed: number;
}

/**
 * A session served by a relay: feed it events, tell it its status; pages join it by id.
 * Hot: events are numbered and kept as they come, whoever is connected.
 */
export interface RelaySession {
  readonly id: string;
  readonly title: string;
  /**
   * Subscribe to the session's events (once; a second call throws `invalid_argument`). Each
   * event is numbered and relayed; completion ends the session `done`, an error `failed`.
   */
  feed(events$: Observable<ServerEvent>): void;
  /** Set the status pages show (any string: `streaming`, `reconnecting` …). */
  setStatus(status: string): void;
  /** What made the session's results, as pages show it (`status` messages carry it); see `follow`. */
  setLabel(label: ResultLabel): void;
  /** The label pages are told, once known. */
  readonly label: ResultLabel | undefined;
  /**
   * Follow a session's life cycle (its `stats.state$`): each non-terminal state becomes the
   * status pages show; the end comes from the events. Followed until the session ends here.
   * Given the `state$` of a `SessionStats`, the session's `label` is followed too: pages are
   * told it before the first event it labels.
   */
  follow(state$: Observable<SessionState>): void;
  /** Resolves once the session ended and every page connected then was sent the end (or dropped). */
  readonly ended: Promise<RelayEnd>;
  /** Stop feeding (unsubscribe) and end the session `closed`, if it still runs. */
  close(): void;
  /** The session's counters. */
  readonly counters: Readonly<RelaySessionCounters>;
  /** The listing entry. */
  info(): RelaySessionInfo;
}

interface Entry {
  readonly id: number;
  readonly frame: string;
}

/** A page reading one session: a cursor into the history, written while its socket has room. */
class Reader {
  sent: number;
  /** The version of the status (and label) last sent; -1: none yet. */
  private statusSent = -1;
  private finished = false;
  private readonly socket: PageSocket;
  readonly done: Promise<void>;
  private resolveDone!: () => void;

  constructor(
    private readonly hub: SessionHub,
    private readonly res: ServerResponse,
    after: number,
  ) {
    this.sent = after;
    // A page whose socket stays full is dropped; it can reconnect with Last-Event-ID and resume from the history.
    this.socket = new PageSocket(res, hub.limits.stallTimeoutMs, hub.limits.scheduler, () => hub.counters.clientsDropped++);
    this.done = new Promise((resolve) => (this.resolveDone = resolve));
    res.on('close', () => this.finish());
  }

  private write(text: string): void {
    this.hub.counters.bytesSent += Buffer.byteLength(text);
    this.res.write(text);
  }

  /** Write what the page has not had, while its socket holds less than the bound. */
  pump(): void {
    if (this.finished || this.socket.blocked) return;
    const limit = this.hub.limits.maxClientBufferBytes;
    const history = this.hub.history;
    while (this.sent < this.hub.lastId) {
      if (this.res.writableLength >= limit) return this.socket.waitForDrain(() => this.pump());
      const first = this.hub.firstRetained();
      if (this.sent + 1 < first) {
        this.hub.counters.gaps++;
        this.write(sseMessage('gap', { after: this.sent === 0 ? '' : String(this.sent), next: String(first), missed: first - this.sent - 1 }));
        this.sent = first - 1;
        continue;
      }
      const entry = history[this.hub.indexOf(this.sent + 1)]!;
      this.write(entry.frame);
      this.sent = entry.id;
    }
    // A page that joins after the end still gets the status once (its title, its last status, its label), then the end.
    if ((!this.hub.end || this.statusSent === -1) && this.statusSent !== this.hub.statusVersion) {
      this.statusSent = this.hub.statusVersion;
      const label = this.hub.label;
      this.write(sseMessage('status', { status: this.hub.status, title: this.hub.title, ...(label ? { label } : {}) }));
    }
    if (this.hub.end) {
      this.finished = true;
      this.socket.stop();
      this.hub.counters.bytesSent += Buffer.byteLength(this.hub.endFrame!);
      this.res.end(this.hub.endFrame, () => this.resolveDone());
    }
  }

  /** A comment line, so proxies keep an idle stream open; skipped when the socket is not empty. */
  heartbeat(): void {
    this.socket.heartbeat(this.finished);
  }

  private finish(): void {
    this.finished = true;
    this.socket.stop();
    this.hub.readers.delete(this);
    this.resolveDone();
  }

  close(): void {
    this.res.destroy();
  }
}

/** The session's state shared by its readers. */
class SessionHub implements RelaySession {
  readonly history: Entry[] = [];
  private head = 0;
  private historyBytes = 0;
  lastId = 0;
  status = 'pending';
  label: ResultLabel | undefined;
  /** Bumped when the status or the label changes: each page is sent a `status` message per version. */
  statusVersion = 0;
  /** The label of the stats whose `state$` is followed, read before each event and state. */
  private labelSource: (() => ResultLabel | undefined) | undefined;
  end: RelayEnd | undefined;
  endFrame: string | undefined;
  readonly readers = new Set<Reader>();
  readonly counters: RelaySessionCounters = { bytesSent: 0, clientsDropped: 0, gaps: 0, eventsTrimmed: 0 };
  private subscription: Subscription | undefined;
  private fed = false;
  readonly ended: Promise<RelayEnd>;
  private resolveEnded!: (end: RelayEnd) => void;
  endedAt: number | undefined;

  constructor(
    readonly id: string,
    readonly title: string,
    readonly limits: RelaySessionLimits,
    private readonly onEnd: (session: SessionHub) => void,
  ) {
    this.ended = new Promise((resolve) => (this.resolveEnded = resolve));
  }

  private following: Subscription | undefined;

  follow(state$: Observable<SessionState>): void {
    this.following?.unsubscribe();
    if (this.end) return;
    const stats = statsOfState(state$);
    if (stats) this.labelSource = () => stats.label;
    // The terminal states come with the events' completion or error, which end the session.
    this.following = state$.subscribe((next) => {
      this.syncLabel();
      if (!isTerminalStatus(next.status)) this.setStatus(next.status);
    });
  }

  /** The followed stats' label, if it changed. */
  private syncLabel(): void {
    const label = this.labelSource?.();
    if (label !== undefined) this.setLabel(label);
  }

  setLabel(label: ResultLabel): void {
    if (this.end || sameLabel(label, this.label)) return;
    this.label = label;
    this.statusVersion++;
    for (const reader of this.readers) reader.pump();
  }

  firstRetained(): number {
    return this.history.length > this.head ? this.history[this.head]!.id : this.lastId + 1;
  }

  indexOf(id: number): number {
    return this.head + (id - this.firstRetained());
  }

  feed(events$: Observable<ServerEvent>): void {
    if (this.fed) throw new InputError('invalid_argument', `relay session ${this.id} is already fed`, { path: 'events$' });
    this.fed = true;
    if (this.end) return;
    this.subscription = events$.subscribe({
      next: (event) => this.append(event),
      error: (err: unknown) => this.finishWith({ status: 'failed', error: errorSummary(err) }),
      complete: () => this.finishWith({ status: 'done' }),
    });
  }

  setStatus(status: string): void {
    if (this.end || status === this.status) return;
    this.status = status;
    this.statusVersion++;
    for (const reader of this.readers) reader.pump();
  }

  private append(event: ServerEvent): void {
    if (this.end) return;
    // The label the event is made by goes out before it.
    this.syncLabel();
    if (this.status === 'pending' || this.status === 'connecting') {
      this.status = 'streaming';
      this.statusVersion++;
    }
    const id = ++this.lastId;
    const frame = sseMessage('event', wireEvent(event), id);
    this.history.push({ id, frame });
    this.historyBytes += frame.length;
    while (this.history.length - this.head > this.limits.historyEvents || (this.historyBytes > this.limits.historyBytes && this.history.length - this.head > 1)) {
      this.historyBytes -= this.history[this.head]!.frame.length;
      this.head++;
      this.counters.eventsTrimmed++;
    }
    // Compact now and then, so trimming stays O(1) amortised.
    if (this.head > 1024 && this.head * 2 > this.history.length) {
      this.history.splice(0, this.head);
      this.head = 0;
    }
    for (const reader of this.readers) reader.pump();
  }

  private finishWith(end: RelayEnd): void {
    if (this.end) return;
    this.syncLabel();
    this.following?.unsubscribe();
    this.end = end;
    this.status = end.status;
    this.endFrame = sseMessage('end', end);
    this.endedAt = this.limits.scheduler.now();
    const readers = [...this.readers];
    for (const reader of readers) reader.pump();
    void Promise.all(readers.map((r) => r.done)).then(() => this.resolveEnded(end));
    this.onEnd(this);
  }

  /** A page joins after the event `after` (0: from the start of what the history holds). */
  join(res: ServerResponse, after: number): Reader {
    const reader = new Reader(this, res, after);
    if (!this.end) this.readers.add(reader);
    reader.pump();
    return reader;
  }

  heartbeat(): void {
    for (const reader of this.readers) reader.heartbeat();
  }

  close(): void {
    this.subscription?.unsubscribe();
    this.finishWith({ status: 'closed' });
  }

  /** Drop every page at once (the relay is shutting down). */
  disconnectAll(): void {
    for (const reader of [...this.readers]) reader.close();
  }

  info(): RelaySessionInfo {
    return {
      id: this.id,
      title: this.title,
      status: this.status,
      events: this.lastId,
      firstRetained: this.firstRetained(),
      ended: this.end !== undefined,
      clients: this.readers.size,
      ...(this.label ? { label: this.label } : {}),
    };
  }
}

/** A session hub for the relay (internal: `createRelay` makes them). */
export function createSessionHub(id: string, title: string, limits: RelaySessionLimits, onEnd: (session: SessionHub) => void): SessionHub {
  checkSessionId(id);
  return new SessionHub(id, title, limits, onEnd);
}

export type { SessionHub };
