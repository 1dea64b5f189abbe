// Live counters of one session, so nothing is lost quietly: every byte read from the
// source is either sent (flushed to the socket) or reported unsent when the session ends,
// and every out-of-contract value the session tolerated is counted and reported.
import type { Observable } from 'rxjs';
import type { SessionState, SessionStatus } from '../schema/sessionState.js';
import type { AudioWarning, EventWarning, WarningHandler } from '../warnings.js';
import { StateStore } from './StateStore.js';
import { callUser } from '../internal/userCallback.js';
import type { AudioAccount } from '../errors/index.js';
import type { EmulatorAlignment, EmulatorHeaderLabel, ResultLabel } from '../schema/resultLabel.js';

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
 * Live counters of one streaming session, and its life cycle as a stream: pass one to the
 * session's `stats` option and read it at any time. Read-only: the session that was given it
 * is its one writer (a resilient stream's figures add up its sessions' own). Every byte read
 * is sent or reported unsent: `bytesRead = (bytesSent - bytesReplayed) + unsent`.
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
  readonly bytesRead: number;
  /** Bytes flushed to the socket, over every session (bytes sent again after a reconnect included: see `bytesReplayed`). */
  readonly bytesSent: number;
  /** Binary frames flushed (fewer than the chunks read when chunks were coalesced). */
  readonly framesSent: number;
  /** Server events received (valid or not). */
  readonly eventsReceived: number;
  /** Out-of-contract values tolerated (normalised, or their event delivered as `unknown`). */
  readonly warnings: number;
  /** The latest of them, or undefined. */
  readonly lastWarning: EventWarning | undefined;
  /** Warnings about the audio itself: no metadata, no detectable format, flow control not connected (docs/audio-sources.md). */
  readonly audioWarnings: number;
  /** The latest of them, or undefined. */
  readonly lastAudioWarning: AudioWarning | undefined;
  /** Times the source was paused for backpressure. */
  readonly pauses: number;
  /** Largest number of bytes waiting to be flushed at any time. */
  readonly peakBufferedBytes: number;
  /** Close code and reason, once closed. */
  readonly closeCode: number | undefined;
  readonly closeReason: string | undefined;
  /** Sessions opened again after a retryable failure (docs/resilience.md). */
  readonly reconnects: number;
  /**
   * Time spent reconnecting, in ms, over the outages that ended: each from its first failure to
   * the first audio frame a reconnected session flushed (the attempts between included). The
   * outage going on now is not in it: see `reconnectingSince` (`sessionFigures` adds both).
   */
  readonly reconnectingMs: number;
  /** When the outage going on now began (its first failure), on the session's scheduler's clock (ms); undefined when none is. */
  readonly reconnectingSince: number | undefined;
  /** Bytes flushed again, to a session that opened after a reconnect, that an earlier session had flushed (also counted in `bytesSent`). */
  readonly bytesReplayed: number;
  /**
   * Bytes read and never sent, that no session will be sent: cut by the replay and outage
   * bounds during an outage, and, once the stream failed or was unsubscribed, whatever was
   * left unsent. Never more than `bytesRead - (bytesSent - bytesReplayed)`.
   */
  readonly bytesDropped: number;
  /** The segment the events arrive from now: the number of sessions that opened after the first (0, then 1 after the first reconnect…). */
  readonly segment: number;
  /**
   * What made the session's results ({@link ResultLabel}): set when its first connection is
   * answered, before its first event (the service; or the emulator, a scenario, a recording,
   * as the emulator says), and given a `note` when a later segment changes what its results
   * are. Undefined until then. Views, the relay and the fleet show it as it is here.
   */
  readonly label: ResultLabel | undefined;
}

/** The figures of a {@link SessionStats}, as their writers hold them (internal: the stats object reads them). */
export class StatsCounters {
  bytesRead = 0;
  bytesSent = 0;
  framesSent = 0;
  eventsReceived = 0;
  warnings = 0;
  lastWarning: EventWarning | undefined = undefined;
  audioWarnings = 0;
  lastAudioWarning: AudioWarning | undefined = undefined;
  pauses = 0;
  peakBufferedBytes = 0;
  closeCode: number | undefined = undefined;
  closeReason: string | undefined = undefined;
  reconnects = 0;
  reconnectingMs = 0;
  reconnectingSince: number | undefined = undefined;
  bytesReplayed = 0;
  bytesDropped = 0;
  segment = 0;
  label: ResultLabel | undefined = undefined;
  /** Not a figure (the stats show no such field): what the connection writing these was told ({@link answerOf}). */
  answer: ConnectionAnswer | undefined = undefined;
}

/**
 * What one connection's socket was told of its results (src/session/sessionLabel.ts): the
 * upgrade's answer, and for a scenario that must first hear the audio, what the emulator found.
 * Written by the connection beside its `label`; not a figure of its stats: a stream of
 * connections reads it ({@link answerOf}) to decide its own label (a resume keeps it).
 */
export interface ConnectionAnswer {
  readonly header: EmulatorHeaderLabel;
  readonly found?: EmulatorAlignment | undefined;
}

type Figure = Exclude<keyof StatsCounters, 'answer'>;

/**
 * The figures each connection counts for itself (its frames, events, warnings, pauses, peak,
 * close), and how a stream of connections adds them up; the others are the stream's own (its
 * feed's bytes, its reconnects and the time they took, its label).
 */
const PER_CONNECTION = { framesSent: 'sum', eventsReceived: 'sum', warnings: 'sum', lastWarning: 'last', pauses: 'sum', peakBufferedBytes: 'max', closeCode: 'last', closeReason: 'last' } as const;
type ConnectionFigure = keyof typeof PER_CONNECTION;
const FIGURES = Object.keys(new StatsCounters()).filter((k) => k !== 'answer') as Figure[];

/** The stats of a stream of connections: the figures of those that ended, added up, and the current one's. */
export interface ConnectionFigures {
  readonly ended: StatsCounters;
  /** The current connection's stats (read, never written, by the stream). */
  current: SessionStats | undefined;
  /** The segment now (read from the stream's clock, never copied). */
  segment(): number;
}

interface Binding {
  readonly store: StateStore;
  /** The stream's own figures (the only ones of a plain session). */
  readonly own: StatsCounters;
  /** Set while a resilient stream owns the stats: its connections' figures. */
  over: ConnectionFigures | undefined;
}

const BINDINGS = new WeakMap<object, Binding>();
/** The stats each `state$` belongs to ({@link statsOfState}). */
const OWNERS = new WeakMap<Observable<SessionState>, SessionStats>();

function read(b: Binding, k: Figure): unknown {
  const over = b.over;
  if (over === undefined || !(k in PER_CONNECTION)) return k === 'segment' && over !== undefined ? over.segment() : b.own[k];
  const kind = PER_CONNECTION[k as ConnectionFigure];
  const ended = over.ended[k];
  const current = over.current?.[k];
  if (kind === 'sum') return (ended as number) + ((current as number | undefined) ?? 0);
  if (kind === 'max') return Math.max(ended as number, (current as number | undefined) ?? 0);
  return current ?? ended;
}

/** The accessors every stats object has: one shared getter per figure. */
const ACCESSORS: PropertyDescriptorMap = Object.fromEntries(
  FIGURES.map((k) => [
    k,
    {
      get(this: object) {
        return read(BINDINGS.get(this)!, k);
      },
      enumerable: true,
      configurable: true,
    },
  ]),
);

function bind(stats: object, own: StatsCounters): Binding {
  const store = new StateStore();
  const b: Binding = { store, own, over: undefined };
  BINDINGS.set(stats, b);
  OWNERS.set(store.state$, stats as SessionStats);
  Object.defineProperties(stats, ACCESSORS);
  Object.defineProperty(stats, 'status', { get: () => store.value.status, enumerable: true, configurable: true });
  // Not enumerable: a copy or a JSON dump of the counters holds numbers, not a stream.
  Object.defineProperty(stats, 'state$', { value: store.state$, enumerable: false, configurable: true });
  return b;
}

/** A fresh {@link SessionStats}: state `connecting`, every counter at zero. */
export function createSessionStats(): SessionStats {
  const stats = {};
  bind(stats, new StatsCounters());
  return stats as SessionStats;
}

/** The binding of `stats`; a stats object made by hand gets one, keeping the figures it held. */
function bindingOf(stats: SessionStats): Binding {
  const b = BINDINGS.get(stats);
  if (b !== undefined) return b;
  const own = new StatsCounters();
  for (const k of FIGURES) {
    const v = (stats as unknown as Record<string, unknown>)[k];
    if (v !== undefined) (own as unknown as Record<string, unknown>)[k] = v;
  }
  return bind(stats, own);
}

/**
 * The figures a session writes for `stats` (internal: the session given the stats is their one
 * writer). A resilient stream that owned them before hands its added-up figures back first.
 */
export function countersOf(stats: SessionStats): StatsCounters {
  const b = bindingOf(stats);
  const over = b.over;
  if (over !== undefined) {
    for (const k of Object.keys(PER_CONNECTION) as ConnectionFigure[]) (b.own as unknown as Record<string, unknown>)[k] = read(b, k);
    b.own.segment = over.segment();
    b.over = undefined;
  }
  return b.own;
}

/**
 * Let a stream of connections own `stats`: their per-connection figures are read from `over`
 * from now on (added up), the stream's own ones from the returned counters.
 */
export function countersOver(stats: SessionStats, over: Omit<ConnectionFigures, 'ended'>): { own: StatsCounters; over: ConnectionFigures } {
  const own = countersOf(stats);
  const ended = new StatsCounters();
  for (const k of Object.keys(PER_CONNECTION) as ConnectionFigure[]) (ended as unknown as Record<string, unknown>)[k] = own[k];
  const figures: ConnectionFigures = { ended, current: over.current, segment: over.segment };
  bindingOf(stats).over = figures;
  return { own, over: figures };
}

/** Add a connection's figures that ended to `ended`. */
export function foldConnection(ended: StatsCounters, connection: SessionStats): void {
  for (const k of Object.keys(PER_CONNECTION) as ConnectionFigure[]) {
    const kind = PER_CONNECTION[k];
    const e = ended as unknown as Record<string, unknown>;
    const v = connection[k];
    if (kind === 'sum') e[k] = (e[k] as number) + (v as number);
    else if (kind === 'max') e[k] = Math.max(e[k] as number, v as number);
    else if (v !== undefined) e[k] = v;
  }
}

/**
 * The stats whose `state$` this is (undefined for any other stream): a relay or a publisher
 * given a session's `stats.state$` reads the session's `label` beside its states.
 */
export function statsOfState(state$: Observable<SessionState> | undefined): SessionStats | undefined {
  return state$ === undefined ? undefined : OWNERS.get(state$);
}

/**
 * What the connection that writes `stats` was told of its results (undefined: nothing yet, or
 * stats no connection writes). Read by a stream of connections, never written but by the connection.
 */
export function answerOf(stats: SessionStats): ConnectionAnswer | undefined {
  return BINDINGS.get(stats)?.own.answer;
}

/** The store a session publishes its state to through `stats` (one is attached to a stats object made by hand). */
export function stateStoreOf(stats: SessionStats): StateStore {
  return bindingOf(stats).store;
}

/** The audio account of a stream's counters: every byte read is sent (once, whatever was replayed) or unsent. */
export function accountOf(stats: Pick<SessionStats, 'bytesRead' | 'bytesSent' | 'bytesReplayed'>): AudioAccount {
  const sent = stats.bytesSent - stats.bytesReplayed;
  return { read: stats.bytesRead, sent, unsent: stats.bytesRead - sent };
}

/** Count each warning in `counters` and hand it to `onWarning` (the session that decoded them). */
export function reportWarnings(warnings: readonly EventWarning[] | undefined, counters: StatsCounters, onWarning: WarningHandler<EventWarning> | undefined): void {
  if (warnings === undefined) return;
  for (const w of warnings) {
    counters.warnings++;
    counters.lastWarning = w;
    callUser(onWarning, w);
  }
}
