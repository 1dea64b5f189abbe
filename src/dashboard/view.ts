// What the dashboard page is sent: the whole derived state (stateJson), the live transcript
// with its partials, and where the session is. One pure function, so it is tested without I/O.
import type { ErrorSummary } from '../relay/protocol.js';
import type { ResultLabel } from '../schema/resultLabel.js';
import type { SessionStatus } from '../schema/sessionState.js';
import type { SessionFigures } from '../session/figures.js';
import type { TranscriptEntry } from '../state/clips.js';
import type { ConversationSnapshot } from '../state/snapshot.js';
import { stateJson, type StateJson } from '../state/stateJson.js';

/** Why the session `failed`: the SvcError's stable code and its first line (the relay's {@link ErrorSummary}). */
export type DashboardError = ErrorSummary;

/** Where the session is, beside its derived state. */
export interface DashboardStatus {
  /** Bumped on every change the page should see; a page can skip a version it already has. */
  readonly version: number;
  /** False until the session has been started (on the first page load by default). */
  readonly started: boolean;
  /**
   * Where the session is, in the session's own vocabulary ({@link SessionStatus}: `connecting`,
   * `streaming`, `paused`, `finishing`, `closing`, `reconnecting`, then `done`, `failed` or `closed`).
   */
  readonly status: SessionStatus;
  /** Set when the session `failed` (or when the page lost events: `relay_gap`). */
  readonly error: DashboardError | null;
  /** What is being analysed, for the page's header (a file name, a call id). */
  readonly title: string;
  readonly bytesSent: number;
  readonly eventsReceived: number;
  /** What made the results, once known (the session's `stats.label`, or the relay's `status` message). */
  readonly label?: ResultLabel | null | undefined;
  /** The session's figures (`sessionFigures`), where its counters are at hand (the Node side). */
  readonly figures?: SessionFigures | undefined;
}

/** The session's account in the view: the figures every view shows, as `analyze --json`'s state line names them. */
export interface DashboardSessionFigures {
  /** Sessions opened again after a failure. */
  readonly reconnects: number;
  /** Time spent reconnecting, ms: each outage from its first failure to the first frame sent again. */
  readonly reconnecting_ms: number;
  /** Time since the session started, outages included, ms. */
  readonly wall_ms: number;
  /** How far into the audio the stream has come, ms (null when bytes cannot be told as time). */
  readonly position_ms: number | null;
  /** Audio sent, each part once, ms. */
  readonly audio_sent_ms: number | null;
  /** Audio sent again after a reconnect, ms. */
  readonly audio_replayed_ms: number | null;
  /** Audio read and never to be sent, ms. */
  readonly audio_dropped_ms: number | null;
}

/** The `state` message: `stateJson` of the snapshot plus the live view of the session. */
export interface DashboardView extends StateJson {
  readonly version: number;
  readonly started: boolean;
  /** Where the session is ({@link SessionStatus}); `done`, `failed` and `closed` are terminal (`isTerminalStatus` from 'svc-stream'). */
  readonly status: SessionStatus;
  readonly error: DashboardError | null;
  readonly title: string;
  /** Partial and final lines in order of first appearance (partials are `status: 'partial'`). */
  readonly transcript: readonly TranscriptEntry[];
  /** The text of the server's `error` event, if one arrived. */
  readonly server_error: string | null;
  readonly bytes_sent: number;
  readonly events_received: number;
  /** How far into the audio the results reach, ms: the `done` duration, else the furthest end of a clip or of an utterance in progress. */
  readonly audio_ms: number;
  /** What made the results ({@link ResultLabel}), null until known. */
  readonly label: ResultLabel | null;
  /** The session's account (Node side only: a page folding relayed events has no counters). */
  readonly session: DashboardSessionFigures | null;
}

/** How far into the audio a session's results reach: the `done` duration, else the furthest end of a clip or partial. Pure. */
export function reachedMs(snapshot: ConversationSnapshot): number {
  const done = snapshot.aggregates.audioDurationMs;
  if (typeof done === 'number') return done;
  let reached = 0;
  for (const t of snapshot.clips.transcript) {
    const c = t.clip as { start_ms?: number | undefined; duration_ms?: number | undefined; end_ms?: number | null | undefined };
    const end = t.status === 'partial' ? c.end_ms : typeof c.start_ms === 'number' && typeof c.duration_ms === 'number' ? c.start_ms + c.duration_ms : undefined;
    if (typeof end === 'number' && end > reached) reached = end;
  }
  return reached;
}

const round = (v: number | undefined): number | null => (v === undefined ? null : Math.round(v));

/** The page's whole view of one moment of the session. Pure. */
export function dashboardView(snapshot: ConversationSnapshot, status: DashboardStatus): DashboardView {
  const f = status.figures;
  return {
    ...stateJson(snapshot),
    version: status.version,
    started: status.started,
    status: status.status,
    error: status.error,
    title: status.title,
    transcript: snapshot.clips.transcript.toArray(),
    server_error: snapshot.error,
    bytes_sent: status.bytesSent,
    events_received: status.eventsReceived,
    audio_ms: reachedMs(snapshot),
    label: status.label ?? null,
    session: f
      ? {
          reconnects: f.reconnects,
          reconnecting_ms: Math.round(f.reconnectingMs),
          wall_ms: Math.round(f.wallMs),
          position_ms: round(f.positionMs),
          audio_sent_ms: round(f.audioMs.sent),
          audio_replayed_ms: round(f.audioMs.replayed),
          audio_dropped_ms: round(f.audioMs.dropped),
        }
      : null,
  };
}
