// Live counters of one session, so nothing is lost quietly: every byte read from the
// source is either sent (flushed to the socket) or reported unsent when the session ends,
// and every out-of-contract value the session tolerated is counted and reported.
import type { SessionStatus } from '../schema/sessionState.js';
import type { AudioWarning, EventWarning, WarningHandler } from '../warnings.js';
import { callUser } from '../internal/userCallback.js';

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
 * The coarse life-cycle names `stats.phase` used before sessions had one vocabulary.
 *
 * @deprecated Use {@link SessionStatus} (`stats.status`, `onStateChange`): `phase` is
 * `status` with `paused` read as `streaming`, `closing` as the status it came from and
 * `failed` as `error`. Removed in the next release.
 */
export type SessionPhase = 'connecting' | 'streaming' | 'finishing' | 'reconnecting' | 'done' | 'error' | 'closed';

/**
 * Live counters of one streaming session, updated in place: pass one to the session's
 * `stats` option and read it at any time. Every byte read is sent or reported unsent.
 */
export interface SessionStats {
  /** The session's state now, in the one vocabulary of `onStateChange` ({@link SessionStatus}). */
  status: SessionStatus;
  /**
   * @deprecated Read {@link SessionStats.status}; `phase` is kept, updated with it, for one
   * release (`paused` reads `streaming`, `closing` keeps the phase before it, `failed` reads `error`).
   */
  phase: SessionPhase;
  /** Bytes received from the audio source. */
  bytesRead: number;
  /** Bytes flushed to the socket. */
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
  /** Time spent reconnecting (from each failure to a session open again), in ms. */
  reconnectingMs: number;
  /** Bytes sent again to a new session (from the commit point); also counted in `bytesSent`. */
  bytesReplayed: number;
  /** Bytes no session will analyse: beyond the replay and outage bounds, or read after a final failure of the resume. */
  bytesDropped: number;
  /** The segment (session) the events arrive from now: 0, then 1 after the first reconnect… */
  segment: number;
}

/** A fresh {@link SessionStats}: status `connecting`, every counter at zero. */
export function createSessionStats(): SessionStats {
  return {
    status: 'connecting',
    phase: 'connecting',
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
    bytesReplayed: 0,
    bytesDropped: 0,
    segment: 0,
  };
}

const PHASES: Record<SessionStatus, SessionPhase | undefined> = {
  connecting: 'connecting',
  streaming: 'streaming',
  paused: 'streaming',
  finishing: 'finishing',
  // A close awaited keeps the phase the session was in.
  closing: undefined,
  reconnecting: 'reconnecting',
  done: 'done',
  failed: 'error',
  closed: 'closed',
};

/** Record a move of the session in `stats`: `status`, and the deprecated `phase` derived from it. */
export function enterStatus(stats: SessionStats, status: SessionStatus): void {
  stats.status = status;
  const phase = PHASES[status];
  if (phase !== undefined) stats.phase = phase;
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
