// The engine of a publisher: one connection for every session of a process, the flush loop
// that writes each session's queue (one script call a batch) and the directory's notes, the
// bounds while Redis is away, the alive notes, and the close. Options are read in publisher.ts.
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
  readonly session: string;
  readonly kind: DirectoryKind;
  readonly epoch: string;
  readonly data: string;
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
  private idle: (() => void) | undefined;

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
      callUser(this.settings.onRedisError, error);
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
        const t = setTimeout(resolve, this.settings.closeTimeoutMs);
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
    if (this.client && this.settings.ownsClient) {
      const c = this.client;
      await c.quit().catch(() => c.disconnect());
    }
    return this.stats;
  }
}

