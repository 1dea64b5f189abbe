// The publishing seam: what a publisher of live sessions is (a session's start, events,
// statuses and end, written where relays read them) and what it reports. An area that
// publishes (telephony's analyzeCalls) names this seam; the fleet's Redis Streams publisher
// (src/fleet/publisher.ts) implements it, and its ioredis types stay out of the others' declarations.
import type { Observable } from 'rxjs';
import type { SvcError } from './errors/index.js';
import type { ServerEvent } from './schema/events.js';
import type { RelayEnd } from './schema/relay.js';
import type { SessionState } from './schema/sessionState.js';
import type { ResultLabel } from './schema/resultLabel.js';

/**
 * Counters of a publisher or of one of its sessions, updated in place. Every entry made is in
 * exactly one of the last four: `entries = published + notPublished + unconfirmed + pending`.
 */
export interface PublishStats {
  /** Entries made: the start (and the new start of a stream found lost), each event, each status, the end. */
  entries: number;
  /** Entries Redis said it holds (an entry sent again after a lost reply counts once). */
  published: number;
  /**
   * Entries known not stored: events dropped while Redis was away past the bounds, entries still
   * waiting at `close()` that were never sent or that Redis answered it did not store, and a run's
   * entries refused because a new run took its id.
   */
  notPublished: number;
  /**
   * Entries sent whose answer never came before `close()`'s deadline (Redis paused, a reply lost
   * with the connection): Redis may store them later or never. Retries use the ids the publisher
   * chose, so each is stored at most once whatever happens.
   */
  unconfirmed: number;
  /** Entries waiting for Redis now. */
  pending: number;
  /** Outages: from the first failure to write to the first write that succeeds (a session counts those during its run). */
  outages: number;
  /** Times a stream was found gone (Redis restarted without persistence, or it expired) and a new epoch was started. */
  streamsLost: number;
}

/** How publishing one session ended: counts and, when something was not published or not confirmed, why. */
export interface PublishReport extends Readonly<PublishStats> {
  readonly id: string;
  /** Why entries were not published or not confirmed (the last reason), when `notPublished + unconfirmed > 0`. */
  readonly error?: SvcError | undefined;
}

/** One session being published: give it the session's events, status and end. */
export interface SessionPublisher {
  readonly id: string;
  /** Append one event (never blocks: it is queued and written in the background). */
  event(event: ServerEvent): void;
  /** Append a status (`connecting`, `streaming`, `reconnecting`, `finishing` …) when it changed. */
  status(status: string): void;
  /** Say what made the session's results (a status entry carrying it) when it changed: see `follow`. */
  label(label: ResultLabel): void;
  /**
   * Follow a session's life cycle (its `stats.state$`) until the end: `connecting`,
   * `streaming`, `reconnecting` and `finishing` become entries (`paused` reads `streaming`;
   * the end comes from `end()`). A later call replaces the stream followed. Given the `state$`
   * of a `SessionStats`, its `label` is published too, before the first event it labels.
   */
  follow(state$: Observable<SessionState>): void;
  /** Append the end (once; later calls do nothing). */
  end(end: RelayEnd): void;
  /** This session's counters. */
  readonly stats: Readonly<PublishStats>;
  /** Resolves after the end, once every entry was stored or given up. */
  readonly settled: Promise<PublishReport>;
}

/** Options of {@link Publisher.publish}. */
export interface PublishOptions {
  /** The session's id in the fleet (1 to 128 of `A-Z a-z 0-9 . _ ~ : -`): the relays' `/sessions/ID/events`. */
  readonly id: string;
  /** Shown by pages (a file name, a call id). Default the id. */
  readonly title?: string | undefined;
  /** The session's life cycle, its `stats.state$` (give the session those stats): its statuses are published too. */
  readonly state$?: Observable<SessionState> | undefined;
  /** Called once, when every entry of the run was stored or given up: what was published and what was not, and why. */
  readonly onReport?: ((report: PublishReport) => void) | undefined;
}

/** A connection that publishes sessions; see {@link createPublisher}. */
export interface Publisher {
  /**
   * The session's events, unchanged, while each is published under `id` (as `publishSession`
   * does, on this publisher's connection). Cold: each subscription is one run of the session.
   */
  publish(events$: Observable<ServerEvent>, options: PublishOptions): Observable<ServerEvent>;
  /** Start publishing session `id` (its `start` entry): a new run of an id replaces the one Redis holds. Throws `invalid_argument` for a bad id or one this publisher runs now. */
  session(id: string, options?: { readonly title?: string | undefined }): SessionPublisher;
  /** Counters over every session. */
  readonly stats: Readonly<PublishStats>;
  /** The Redis it publishes to, without a password. */
  readonly target: string;
  /**
   * End any live session `closed`, wait for pending entries, then close the connection it
   * opened (QUIT), all within one deadline, `closeTimeoutMs` (5 s by default). What is still
   * pending then is counted `unconfirmed` (sent, no answer) or `notPublished`. Resolves with
   * the totals; calling it again returns the same promise.
   */
  close(): Promise<PublishStats>;
}
