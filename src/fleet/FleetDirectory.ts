// The directory of a relay process: every session the publishers announced (start, status,
// liveness, end), kept from the directory stream's entries, swept by its own clock. No I/O:
// the reader brings the entries, and this decides what they mean.
import { interval, Subject, type SchedulerLike, type Subscription } from 'rxjs';
import { decodeDirectoryEntry, type DirectoryEntry } from './streamEntries.js';
import { ResultLabelSchema, type ResultLabel } from '../schema/resultLabel.js';

/** A label from a note: one this reader cannot read (a newer publisher's) reads as none. */
function labelOf(value: unknown): ResultLabel | undefined {
  if (value === undefined) return undefined;
  const parsed = ResultLabelSchema.safeParse(value);
  return parsed.success ? parsed.data : undefined;
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
  /** What made its results, once its publisher said. */
  label: ResultLabel | undefined;
  /** When this reader last heard of it (its clock). */
  heardAt: number;
}

/** What the directory is told at its start. */
export interface FleetDirectoryOptions {
  /** A live session whose publisher was not heard from this long is `stale`. */
  readonly staleMs: number;
  /** How long an ended (or stale) session stays. */
  readonly keepEndedMs: number;
  /** The clock (ms since the epoch). */
  readonly now: () => number;
  /** Scheduler of the sweep. */
  readonly scheduler: SchedulerLike;
  /** A session started again in another epoch (a new run replaced it). */
  readonly replaced: (id: string, epoch: string) => void;
}

export class FleetDirectory {
  private readonly sessionsById = new Map<string, DirectorySession>();
  /** The id of the last directory entry read: the blocking read goes on from there. */
  lastId = '0-0';
  private readonly changes = new Subject<string>();
  /** Emits a session's id whenever the directory changed for it (hot). */
  readonly changes$ = this.changes.asObservable();
  private readonly sweep: Subscription;

  constructor(private readonly options: FleetDirectoryOptions) {
    this.sweep = interval(Math.min(options.staleMs, 10_000), options.scheduler).subscribe(() => this.sweepOnce());
  }

  /** One directory entry; `loading` while the history is read (heard when written, no change said). */
  read(id: string, fields: readonly string[], loading: boolean): void {
    this.lastId = id;
    const d = decodeDirectoryEntry(id, fields);
    if (!d) return;
    // While loading history, "heard" is when the publisher wrote it; live, it is now.
    const heard = loading ? Number(id.split('-')[0]) : this.options.now();
    if (d.kind === 'alive') {
      const list = (d.info as { sessions?: unknown }).sessions;
      if (list === null || typeof list !== 'object') return;
      for (const [sid, events] of Object.entries(list as Record<string, unknown>)) {
        let s = this.sessionsById.get(sid);
        // Live for longer than the directory keeps: known from here on by its liveness alone.
        if (!s) {
          s = { id: sid, epoch: '', title: sid, status: 'streaming', startedAt: undefined, endedAt: undefined, events: 0, ended: false, error: undefined, label: undefined, heardAt: heard };
          this.sessionsById.set(sid, s);
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
    let s = this.sessionsById.get(d.session);
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
        label: labelOf(info.label) ?? (replaced ? undefined : s?.label),
        heardAt: heard,
      };
      // Re-inserted, so the map keeps the order sessions (re)started in.
      this.sessionsById.delete(d.session);
      this.sessionsById.set(d.session, s);
      if (replaced) this.options.replaced(d.session, d.epoch);
      if (d.kind === 'start') return;
    }
    if (s.epoch === '') s.epoch = d.epoch;
    if (d.epoch !== s.epoch) return; // a late note of an earlier run
    s.heardAt = Math.max(s.heardAt, heard);
    if (typeof info.events === 'number') s.events = info.events;
    if (d.kind === 'status' && typeof info.status === 'string' && !s.ended) s.status = info.status;
    const label = labelOf(info.label);
    if (label !== undefined) s.label = label;
    if (d.kind === 'end') {
      s.ended = true;
      s.endedAt = heard;
      s.status = typeof info.status === 'string' ? info.status : 'done';
      s.error = info.error;
    }
  }

  /** True when this session's publisher was not heard from for `staleMs` while it was live. */
  isStale(s: DirectorySession): boolean {
    return !s.ended && this.options.now() - s.heardAt > this.options.staleMs;
  }

  private sweepOnce(): void {
    const { now, staleMs, keepEndedMs } = this.options;
    const at = now();
    for (const s of [...this.sessionsById.values()]) {
      const quietFor = at - (s.ended ? s.endedAt ?? s.heardAt : s.heardAt);
      if (quietFor > keepEndedMs + (s.ended ? 0 : staleMs)) {
        this.sessionsById.delete(s.id);
        this.changes.next(s.id);
      } else if (!s.ended && quietFor > staleMs && quietFor <= staleMs + Math.min(staleMs, 10_000)) {
        this.changes.next(s.id); // just went stale
      }
    }
  }

  /** The sessions, oldest (re)start first. */
  sessions(): DirectorySession[] {
    return [...this.sessionsById.values()];
  }

  session(id: string): DirectorySession | undefined {
    return this.sessionsById.get(id);
  }

  close(): void {
    this.sweep.unsubscribe();
    this.changes.complete();
  }
}
