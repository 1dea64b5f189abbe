// The engine of a publisher: one connection for every session of a process, the flush loop
// that writes each session's queue (one script call a batch) and the directory's notes, the
// bounds while Redis is away, outages (one notice each), the alive and progress notes, and the
// close within one deadline. Options are read in publisher.ts.
import type { Redis } from 'ioredis';
import { timer, type Observable, type SchedulerLike, type Subscription } from 'rxjs';
import { InputError, SvcError } from '../errors/index.js';
import { callUser } from '../internal/userCallback.js';
import type { PublishOptions, PublishStats, Publisher, SessionPublisher } from '../publishing.js';
import type { ServerEvent } from '../schema/events.js';
import { checkSessionId } from '../schema/sessionId.js';
import { appendClient, type AppendClient } from './appendScript.js';
import { redisError } from './redisConnection.js';
import { publishEvents } from './publishEvents.js';
import { freshStats, SessionWriter, type WriterOwner } from './SessionWriter.js';
import type { DirectoryKind, FleetKeys } from './streamEntries.js';

/** A publisher's options, checked and with their defaults (see `PublisherOptions`). */
export interface PublisherSettings {
  readonly keys: FleetKeys;
  readonly retentionMs: number;
  readonly maxEntries: number;
  readonly maxBytes: number;
  readonly aliveMs: number;
  readonly closeTimeoutMs: number;
  readonly now: () => number;
  readonly scheduler: SchedulerLike;
  readonly onRedisError: ((error: SvcError) => void) | undefined;
  /** The client was opened here (from a URL), so `close()` quits it; a given client is left open. */
  readonly ownsClient: boolean;
}

interface DirectoryNote {
  /** The session ('' for a note about several: `alive`). */
  readonly session: string;
  readonly kind: DirectoryKind;
  readonly epoch: string;
  readonly data: string;
}

/** Sessions' event counts reach the directory at most this often while events flow (relays list them). */
const PROGRESS_MS = 1000;

/**
 * How a command that failed failed: `answered` (Redis said no: nothing of it ran), `unsent` (it
 * never left this process), or `unanswered` (it may have run: a timeout, a closed connection).
 */
function failureKind(err: unknown): 'answered' | 'unsent' | 'unanswered' {
  const e = err as { name?: unknown; message?: unknown } | null;
  if (e?.name === 'ReplyError') return 'answered';
  if (typeof e?.message === 'string' && e.message.startsWith("Stream isn't writeable")) return 'unsent';
  return 'unanswered';
}

/** The shared part: one connection, the flush loop, the bounds, the directory notes. */
export class PublisherCore implements Publisher, WriterOwner {
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
  /** Not writing until the retry timer or a reconnect says to try again. */
  private down = false;
  /** The outage under way, from the first failure to the first command that succeeds. */
  private outage: SvcError | undefined;
  private retry: Subscription | undefined;
  private retryMs = 50;
  private readonly alive: Subscription;
  private readonly progress = new Set<SessionWriter>();
  private progressTimer: Subscription | undefined;
  private closed = false;
  /** Every pending entry was given up at close: answers that still come change nothing. */
  private finished = false;
  private closing: Promise<PublishStats> | undefined;
  readonly now: () => number;
  private readonly scheduler: SchedulerLike;
  private readonly retentionMs: number;
  private readonly maxEntries: number;
  private readonly maxBytes: number;
  private readonly aliveMs: number;
  private idle: (() => void) | undefined;
  private detach: (() => void) | undefined;

  constructor(
    private readonly settings: PublisherSettings,
    readonly target: string,
    client: Promise<Redis>,
  ) {
    ({ keys: this.keys, retentionMs: this.retentionMs, maxEntries: this.maxEntries, maxBytes: this.maxBytes, aliveMs: this.aliveMs, now: this.now, scheduler: this.scheduler } = settings);
    this.alive = timer(this.aliveMs, this.aliveMs, this.scheduler).subscribe(() => this.announce());
    this.loaded = client.then(
      (c) => {
        this.client = appendClient(c);
        let lastError: unknown;
        const onError = (err: unknown): void => void (lastError = err);
        const onClose = (): void => {
          if (!this.closed) this.failed(lastError);
        };
        const onReady = (): void => {
          this.down = false;
          this.retryMs = 50;
          this.retry?.unsubscribe();
          this.wake();
        };
        c.on('error', onError);
        c.on('close', onClose);
        c.on('ready', onReady);
        this.detach = () => {
          c.off('error', onError);
          c.off('close', onClose);
          c.off('ready', onReady);
        };
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
    callUser(this.settings.onRedisError, error);
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
    if (this.outage) writer.outageBegan();
    if (this.fatal) writer.abandon(this.fatal);
    return writer;
  }

  publish(events$: Observable<ServerEvent>, options: PublishOptions): Observable<ServerEvent> {
    return publishEvents(this, events$, options);
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
    this.noteDirectory({ session: writer.id, kind, epoch: writer.epoch, data: JSON.stringify(info) });
  }

  private noteDirectory(note: DirectoryNote): void {
    if (this.fatal || this.finished) return;
    this.directory.push(note);
    // The directory is small and only summarises: when Redis is away long, keep its latest notes.
    if (this.directory.length > 10_000) this.directory.splice(0, this.directory.length - 10_000);
    this.wake();
  }

  ended(writer: SessionWriter): void {
    this.progress.delete(writer);
    // Settled writers leave the map once their entries are written, so an id can run again.
    void writer.settled.then(() => {
      if (this.sessions.get(writer.id) === writer) this.sessions.delete(writer.id);
    });
  }

  /**
   * `writer` made an event: its count goes to the directory within `PROGRESS_MS`, in one note
   * for every session that moved (relays list sessions from the directory).
   */
  progressed(writer: SessionWriter): void {
    if (this.closed || this.fatal) return;
    this.progress.add(writer);
    this.progressTimer ??= timer(Math.min(PROGRESS_MS, this.aliveMs), this.scheduler).subscribe(() => {
      this.progressTimer = undefined;
      const sessions: Record<string, number> = {};
      let any = false;
      for (const w of this.progress) if (w.live && !w.gaveUp) {
        sessions[w.id] = w.events;
        any = true;
      }
      this.progress.clear();
      if (any) this.noteDirectory({ session: '', kind: 'alive', epoch: '', data: JSON.stringify({ sessions }) });
    });
  }

  /** `writer` has entries to write. */
  enqueued(writer: SessionWriter): void {
    this.writers.add(writer);
    this.wake();
  }

  /** Something is to be written: flush soon (after the current turn, so entries batch). */
  wake(): void {
    if (this.scheduled || this.flushing || this.down || !this.client || this.finished) return;
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
    if (!client || this.flushing || this.finished) return;
    // Not connected (yet, or again): ioredis reconnects and says `ready`.
    if (client.status !== 'ready') return;
    this.flushing = true;
    const minId = this.minId();
    const ttl = this.ttl();
    const work: Promise<void>[] = [];
    let failure: unknown;
    for (const writer of [...this.writers]) {
      this.writers.delete(writer);
      if (writer.queue.length === 0) continue;
      const batch = writer.batch();
      const args: (string | number)[] = [writer.epoch, minId, ttl];
      for (const e of batch) args.push(`${e.ms}-${e.seq}`, e.kind, e.data);
      const epoch = writer.epoch;
      const current = (): boolean => writer.epoch === epoch && !writer.gaveUp && !this.finished;
      work.push(
        client.svcStreamAppend(this.keys.stream(writer.id), this.keys.epoch(writer.id), ...args).then(
          (reply) => {
            if (!current()) return;
            const [result, added, dup] = reply;
            if (result === 'ok') writer.acknowledge(Number(added) + Number(dup));
            else if (result === 'err') {
              // Redis refused a write (out of memory, a read-only replica): what came before it is stored.
              writer.acknowledge(Number(added) + Number(dup));
              failure ??= new Error(reply[3]);
              this.writers.add(writer);
            } else if (result === 'lost') writer.restart();
            else writer.abandon(new SvcError('invalid_argument', `session ${writer.id} was taken over by another publisher (a new run of the same id); this run's entries stop here`), true);
          },
          (err: unknown) => {
            failure ??= err;
            if (!current()) return;
            const kind = failureKind(err);
            if (kind === 'answered') writer.acknowledge(0);
            else if (kind === 'unsent') writer.unsent();
            else writer.unanswered();
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
    // In an outage with nothing to write, a PING says when Redis answers again.
    if (work.length === 0 && this.outage) work.push(client.ping().then(() => undefined, (err: unknown) => void (failure ??= err)));
    await Promise.all(work);
    this.flushing = false;
    if (this.finished) return;
    if (failure !== undefined) {
      this.failed(failure);
      return;
    }
    this.outage = undefined;
    this.retryMs = 50;
    // More came meanwhile: write it. Nothing left: idle (no loop of empty flushes).
    if (this.writers.size > 0 || this.directory.length > 0) this.wake();
    else this.idle?.();
  }

  /**
   * Writing failed (or the connection closed): the first failure of an outage is counted and
   * told once; the outage lasts until a command succeeds. Flushing waits for the retry timer
   * (backing off to 2 s) or a reconnect.
   */
  private failed(err: unknown): void {
    const error = redisError(err ?? new Error('connection closed'), `cannot publish to Redis at ${this.target}`);
    if (!this.outage) {
      this.outage = error;
      this.stats.outages++;
      for (const w of this.sessions.values()) w.outageBegan();
      callUser(this.settings.onRedisError, error);
    }
    for (const w of this.sessions.values()) if (w.queue.length > 0) w.error = error;
    this.down = true;
    // ioredis reconnects on its own and says `ready`; a timer also tries again, for a
    // connection that is up but failing commands (a loading replica, a full memory).
    this.retry?.unsubscribe();
    this.retry = timer(this.retryMs, this.scheduler).subscribe(() => {
      this.down = false;
      this.wake();
    });
    this.retryMs = Math.min(this.retryMs * 2, 2000);
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

  close(): Promise<PublishStats> {
    return (this.closing ??= this.shutdown());
  }

  /**
   * One deadline, `closeTimeoutMs`, for all of it: the client still loading, the pending entries
   * (while Redis answers, or is still being reached for the first time; at once when it is
   * known to be away) and the QUIT. Then what is left is given up and the connection cut.
   */
  private async shutdown(): Promise<PublishStats> {
    this.closed = true;
    this.alive.unsubscribe();
    this.progressTimer?.unsubscribe();
    let deadline: Subscription | undefined;
    const timeUp = new Promise<void>((resolve) => (deadline = timer(this.settings.closeTimeoutMs, this.scheduler).subscribe(() => resolve())));
    // A publisher opened a moment ago may still be loading its client: its entries wait for it.
    await Promise.race([this.loaded, timeUp]);
    for (const w of this.sessions.values()) if (w.live) w.end({ status: 'closed' });
    const status = this.client?.status;
    const reachable = status === 'ready' || ((status === 'connecting' || status === 'connect' || status === 'wait') && this.stats.outages === 0);
    if ((this.stats.pending > 0 || this.directory.length > 0) && reachable) {
      await Promise.race([
        timeUp,
        new Promise<void>((resolve) => {
          this.idle = resolve;
          this.wake();
        }),
      ]);
    }
    this.idle = undefined;
    this.finished = true;
    this.retry?.unsubscribe();
    const gone = new SvcError('redis_unavailable', `the publisher to ${this.target} closed with entries Redis had not stored`, { retryable: true });
    for (const w of this.sessions.values()) if (w.queue.length > 0) w.abandon(w.error ?? gone);
    this.writers.clear();
    this.directory.length = 0;
    this.detach?.();
    const c = this.client;
    if (c && this.settings.ownsClient) {
      // QUIT lets Redis finish what it was sent; within what is left of the deadline.
      await Promise.race([c.quit().catch(() => undefined), timeUp]);
      c.disconnect();
    }
    deadline?.unsubscribe();
    return this.stats;
  }
}
