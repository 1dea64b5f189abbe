// One session's side of a publisher: its entries numbered 1, 2, 3 … in its epoch and queued
// until stored, its statuses and end, a new epoch when its stream was lost, and the report it
// settles with. The publisher that owns it writes the queue; what it asks of it is `WriterOwner`.
// Batches are always the head of the queue, so what may be stored without Redis having said so
// is a prefix of it, kept as a count: the entries of a command sent and not answered.
import type { Observable, Subscription } from 'rxjs';
import type { SvcError } from '../errors/index.js';
import type { PublishReport, PublishStats, SessionPublisher } from '../publishing.js';
import type { ServerEvent } from '../schema/events.js';
import { wireEvent, type RelayEnd } from '../schema/relay.js';
import type { SessionState } from '../schema/sessionState.js';
import { sameLabel, type ResultLabel } from '../schema/resultLabel.js';
import { statsOfState } from '../session/stats.js';
import { newEpoch, type DirectoryKind, type EntryKind } from './streamEntries.js';

/** Entries one script call appends at most. */
const BATCH = 256;
/** Statuses worth an entry: `paused` and `closing` come and go with flow control and the close handshake. */
const PUBLISHED_STATUSES: ReadonlySet<string> = new Set(['connecting', 'streaming', 'finishing', 'reconnecting']);

/** What a session writer asks of the publisher that owns it. */
export interface WriterOwner {
  /** The publisher's counters, summed over its sessions. */
  readonly stats: PublishStats;
  /** The clock of entry ids. */
  now(): number;
  /** Whether an event of `bytes` fits within the pending bounds. */
  room(bytes: number): boolean;
  /** The reason given for events dropped past the bounds. */
  overflowError(): SvcError;
  /** Entries and bytes pending grew (or, negative, shrank). */
  held(entries: number, bytes: number): void;
  /** A note for the directory. */
  note(writer: SessionWriter, kind: DirectoryKind, info: Record<string, unknown>): void;
  /** `writer` has entries to write. */
  enqueued(writer: SessionWriter): void;
  /** `writer` ended (its id may run again once it settles). */
  ended(writer: SessionWriter): void;
  /** `writer` made another event (for the directory's count). */
  progressed(writer: SessionWriter): void;
}

/** An entry waiting to be stored. */
export interface Entry {
  ms: number;
  seq: number;
  readonly kind: EntryKind;
  readonly data: string;
}

export function freshStats(): PublishStats {
  return { entries: 0, published: 0, notPublished: 0, unconfirmed: 0, pending: 0, outages: 0, streamsLost: 0 };
}

export class SessionWriter implements SessionPublisher {
  readonly stats = freshStats();
  epoch = newEpoch();
  readonly queue: Entry[] = [];
  private seq = 0;
  private lastMs = 0;
  /** Entries at the head of the queue in a command sent now, not answered yet. */
  private inFlight = 0;
  /** Entries at the head of the queue sent in a command that was never answered (timed out, or the connection closed): Redis may hold them. */
  private doubtful = 0;
  private lastStatus = '';
  /** What made the session's results, once said; status entries carry it from then on. */
  private labelNow: ResultLabel | undefined;
  /** The label of the stats whose `state$` is followed, read before each event and state. */
  private labelSource: (() => ResultLabel | undefined) | undefined;
  private ended = false;
  gaveUp = false;
  events = 0;
  error: SvcError | undefined;
  readonly settled: Promise<PublishReport>;
  private resolveSettled!: (report: PublishReport) => void;
  private done = false;

  constructor(
    private readonly owner: WriterOwner,
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
      this.count('notPublished', 1);
      this.checkSettled();
      return;
    }
    const ms = (this.lastMs = Math.max(this.owner.now(), this.lastMs));
    const seq = ++this.seq;
    this.count('entries', 1);
    // Only events are dropped past the bounds: the start, statuses and the end always wait.
    if (kind === 'event' && !this.owner.room(data.length)) {
      this.count('notPublished', 1);
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

  /** An outage began while this session runs (the publisher counts it once for itself). */
  outageBegan(): void {
    if (!this.done) this.stats.outages++;
  }

  event(event: ServerEvent): void {
    if (this.ended) return;
    this.syncLabel();
    this.events++;
    this.push('event', JSON.stringify(wireEvent(event)));
    this.owner.progressed(this);
  }

  status(status: string): void {
    if (this.ended || status === this.lastStatus) return;
    this.lastStatus = status;
    this.pushStatus();
  }

  label(label: ResultLabel): void {
    if (this.ended || sameLabel(label, this.labelNow)) return;
    this.labelNow = label;
    this.pushStatus();
  }

  /** A status entry (and directory note) of the status and label now: readers keep the last of each. */
  private pushStatus(): void {
    const said = { status: this.lastStatus || 'connecting', ...(this.labelNow ? { label: this.labelNow } : {}) };
    this.push('status', JSON.stringify(said));
    this.owner.note(this, 'status', { ...said, events: this.events });
  }

  /** The followed stats' label, if it changed. */
  private syncLabel(): void {
    const label = this.labelSource?.();
    if (label !== undefined) this.label(label);
  }

  private following: Subscription | undefined;

  follow(state$: Observable<SessionState>): void {
    this.following?.unsubscribe();
    if (this.ended) return;
    const stats = statsOfState(state$);
    if (stats) this.labelSource = () => stats.label;
    this.following = state$.subscribe((next) => {
      this.syncLabel();
      const status = next.status === 'paused' ? 'streaming' : next.status;
      if (PUBLISHED_STATUSES.has(status)) this.status(status);
    });
  }

  end(end: RelayEnd): void {
    if (this.ended) return;
    this.syncLabel();
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
    // Nothing of the old epoch can be stored any more: its stream is gone, and a batch of it
    // still on its way is refused by the script (another epoch holds the key, or none does).
    this.inFlight = 0;
    this.doubtful = 0;
    const pending = this.queue.splice(0);
    this.seq = 0;
    const first = pending[0]?.ms ?? this.owner.now();
    const start: Entry = { ms: first, seq: ++this.seq, kind: 'start', data: JSON.stringify({ title: this.title, startedAt: this.startedAt, restarted: true, ...(this.labelNow ? { label: this.labelNow } : {}) }) };
    this.queue.push(start);
    this.owner.held(1, start.data.length);
    // The new start is an entry made like any other: counted, so `published <= entries` holds.
    this.count('entries', 1);
    this.count('pending', 1);
    for (const e of pending) {
      e.seq = ++this.seq;
      this.queue.push(e);
    }
    this.owner.enqueued(this);
    this.owner.note(this, 'start', { title: this.title, startedAt: this.startedAt, status: this.lastStatus || 'streaming', events: this.events, ...(this.labelNow ? { label: this.labelNow } : {}) });
  }

  /**
   * Redis answered the batch in flight: its first `stored` entries are stored (or were already),
   * off the queue; the rest of it is known not stored. Any earlier unanswered command of this
   * connection ran before the answer, so nothing is in doubt any more.
   */
  acknowledge(stored: number): void {
    const taken = this.queue.splice(0, stored);
    this.inFlight = 0;
    this.doubtful = 0;
    this.owner.held(-taken.length, -taken.reduce((s, e) => s + e.data.length, 0));
    this.count('pending', -taken.length);
    this.count('published', taken.length);
    if (this.queue.length > 0) this.owner.enqueued(this);
    this.checkSettled();
  }

  /** The command in flight got no answer (a timeout, a closed connection): Redis may hold its entries. */
  unanswered(): void {
    this.doubtful = Math.max(this.doubtful, this.inFlight);
    this.inFlight = 0;
  }

  /** The command in flight never left (the connection was not writable): nothing of it was stored. */
  unsent(): void {
    this.inFlight = 0;
  }

  /** Entries that may be stored though Redis never said so. */
  get inDoubt(): number {
    return Math.min(this.queue.length, Math.max(this.doubtful, this.inFlight));
  }

  /**
   * Give up on every pending entry (and any later one), with `error` as the reason: those sent
   * without an answer are `unconfirmed`, the others `notPublished`. `answered`: Redis's answer
   * says none of them is stored (another run took the id).
   */
  abandon(error: SvcError, answered = false): void {
    const unconfirmed = answered ? 0 : this.inDoubt;
    const taken = this.queue.splice(0);
    this.inFlight = 0;
    this.doubtful = 0;
    this.owner.held(-taken.length, -taken.reduce((s, e) => s + e.data.length, 0));
    this.count('pending', -taken.length);
    this.count('unconfirmed', unconfirmed);
    this.count('notPublished', taken.length - unconfirmed);
    this.error = error;
    this.gaveUp = true;
    this.checkSettled();
  }

  /** The next batch to send, from the head of the queue; marked in flight until `acknowledge`, `unanswered` or `unsent`. */
  batch(): Entry[] {
    const batch = this.queue.slice(0, BATCH);
    this.inFlight = batch.length;
    return batch;
  }

  checkSettled(): void {
    if (this.done || !this.ended || this.queue.length > 0) return;
    this.done = true;
    const lost = this.stats.notPublished + this.stats.unconfirmed;
    this.resolveSettled({ id: this.id, ...this.stats, ...(lost > 0 && this.error ? { error: this.error } : {}) });
  }
}
