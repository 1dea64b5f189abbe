// Live counters of one session, so nothing is lost quietly: every byte read from the
// source is either sent (flushed to the socket) or reported unsent when the session ends,
// and every out-of-contract value the session tolerated is counted and reported.
import type { Observable } from 'rxjs';
import type { SessionState, SessionStatus } from '../schema/sessionState.js';
import type { AudioWarning, EventWarning, WarningHandler } from '../warnings.js';
import { StateStore } from './stateStore.js';
import { callUser } from '../internal/userCallback.js';
import type { AudioAccount } from '../errors.js';
import type { ResultLabel } from '../schema/resultLabel.js';

/** How a session treats out-of-contract values inside well-formed events (docs/tolerance.md). */
export interface ToleranceOptions {
  /**
   * Fail the session with `malformed_frame` on the first out-of-contract value, as sessions
   * did before tolerance. Default false: keep going, normalise the value or deliver the
   * event as `unknown`, count it in `stats.warnings` and call `onWarning`. Invalid JSON,
   * binary and oversized frames fail the session in both modes.
   */
  readonly strict?: boolean | undefined;
  /**
   * Called synchronously with each tolerated value, before its event is emitted. It must not
   * throw: an exception is rethrown asynchronously (as RxJS reports unhandled errors).
   */
  readonly onWarning?: WarningHandler<EventWarning> | undefined;
}

/**
 * Live counters of one streaming session, and its life cycle as a stream, updated in place:
 * pass one to the session's `stats` option and read it at any time. Every byte read is sent
 * or reported unsent: `bytesRead = (bytesSent - bytesReplayed) + unsent`.
 */
export interface SessionStats {
  /**
   * The session's life cycle: hot, replays the current state to each new subscriber, then
   * every change in order (`connecting`, `streaming`, `paused`, …, `reconnecting` and the
   * next session's states, then `done`, `failed` or `closed`). Never errors and never
   * completes: a terminal status is the last state a subscription of the session sets.
   * `onStateChange` is a convenience over it.
   */
  readonly state$: Observable<SessionState>;
  /** The session's status now: `state$`'s current value's `status` ({@link SessionStatus}). */
  readonly status: SessionStatus;
  /** Bytes received from the audio source (each byte once, however many sessions it was sent to). */
  bytesRead: number;
  /** Bytes flushed to the socket, over every session (bytes sent again after a reconnect included: see `bytesReplayed`). */
  bytesSent: number;
  /** Binary frames flushed (fewer than the chunks read when chunks were coalesced). */
  framesSent: number;
  /** Server events received (valid or not). */
  eventsReceived: number;
  /** Out-of-contract values tolerated (normalised, or their event delivered as `unknown`). */
  warnings: number;
  /** The latest of them, or undefined. */
  lastWarning: EventWarning | undefined;
  /** Warnings about the audio itself: no metadata, no detectable format, flow control not connected (docs/audio-sources.md). */
  audioWarnings: number;
  /** The latest of them, or undefined. */
  lastAudioWarning: AudioWarning | undefined;
  /** Times the source was paused for backpressure. */
  pauses: number;
  /** Largest number of bytes waiting to be flushed at any time. */
  peakBufferedBytes: number;
  /** Close code and reason, once closed. */
  closeCode: number | undefined;
  closeReason: string | undefined;
  /** Sessions opened again after a retryable failure (docs/resilience.md). */
  reconnects: number;
  /**
   * Time spent reconnecting, in ms, over the outages that ended: each from its first failure to
   * the first audio frame a reconnected session flushed (the attempts between included). The
   * outage going on now is not in it: see `reconnectingSince` (`sessionFigures` adds both).
   */
  reconnectingMs: number;
  /** When the outage going on now began (its first failure), on the session's scheduler's clock (ms); undefined when none is. */
  reconnectingSince: number | undefined;
  /** Bytes flushed again, to a session that opened after a reconnect, that an earlier session had flushed (also counted in `bytesSent`). */
  bytesReplayed: number;
  /**
   * Bytes read and never sent, that no session will be sent: cut by the replay and outage
   * bounds during an outage, and, once the stream failed or was unsubscribed, whatever was
   * left unsent. Never more than `bytesRead - (bytesSent - bytesReplayed)`.
   */
  bytesDropped: number;
  /** The segment the events arrive from now: the number of sessions that opened after the first (0, then 1 after the first reconnect…). */
  segment: number;
  /**
   * What made the session's results ({@link ResultLabel}): set when its first connection is
   * answered, before its first event (the service; or the emulator, a scenario, a recording,
   * as the emulator says), and given a `note` when a later segment changes what its results
   * are. Undefined until then. Views, the relay and the fleet show it as it is here.
   */
  label: ResultLabel | undefined;
}

/** The store behind each stats object's `state$` and `status` (set only by the session that owns the stats). */
const STORES = new WeakMap<SessionStats, StateStore>();

/** A fresh {@link SessionStats}: state `connecting`, every counter at zero. */
export function createSessionStats(): SessionStats {
  const store = new StateStore();
  const stats = {
    get status(): SessionStatus {
      return store.value.status;
    },
    bytesRead: 0,
    bytesSent: 0,
    framesSent: 0,
    eventsReceived: 0,
    warnings: 0,
    lastWarning: undefined,
    audioWarnings: 0,
    lastAudioWarning: undefined,
    pauses: 0,
    peakBufferedBytes: 0,
    closeCode: undefined,
    closeReason: undefined,
    reconnects: 0,
    reconnectingMs: 0,
    reconnectingSince: undefined,
    bytesReplayed: 0,
    bytesDropped: 0,
    segment: 0,
    label: undefined,
  } as Omit<SessionStats, 'state$'> as SessionStats;
  // Not enumerable: a copy or a JSON dump of the counters holds numbers, not a stream.
  Object.defineProperty(stats, 'state$', { value: store.state$, enumerable: false });
  STORES.set(stats, store);
  OWNERS.set(store.state$, stats);
  return stats;
}

/** The stats each `state$` belongs to. */
const OWNERS = new WeakMap<Observable<SessionState>, SessionStats>();

/**
 * The stats whose `state$` this is (undefined for any other stream): a relay or a publisher
 * given a session's `stats.state$` reads the session's `label` beside its states.
 */
export function statsOfState(state$: Observable<SessionState> | undefined): SessionStats | undefined {
  return state$ === undefined ? undefined : OWNERS.get(state$);
}

/** The store a session publishes its state to through `stats` (one is attached to a stats object made by hand). */
export function stateStoreOf(stats: SessionStats): StateStore {
  let store = STORES.get(stats);
  if (store === undefined) {
    const made = new StateStore();
    store = made;
    Object.defineProperty(stats, 'state$', { value: made.state$, enumerable: false, configurable: true });
    Object.defineProperty(stats, 'status', { get: () => made.value.status, enumerable: true, configurable: true });
    STORES.set(stats, made);
    OWNERS.set(made.state$, stats);
  }
  return store;
}

/** The audio account of a stream's counters: every byte read is sent (once, whatever was replayed) or unsent. */
export function accountOf(stats: SessionStats): AudioAccount {
  const sent = stats.bytesSent - stats.bytesReplayed;
  return { read: stats.bytesRead, sent, unsent: stats.bytesRead - sent };
}

/** Count each warning in `stats` and hand it to `onWarning`; used by the decoders. */
export function reportWarnings(warnings: readonly EventWarning[] | undefined, stats: SessionStats | undefined, options: ToleranceOptions): void {
  if (warnings === undefined) return;
  for (const w of warnings) {
    if (stats) {
      stats.warnings++;
      stats.lastWarning = w;
    }
    callUser(options.onWarning, w);
  }
}
