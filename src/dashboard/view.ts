// What the dashboard page is sent: the whole derived state (stateJson), the live transcript
// with its partials, and where the session is. One pure function, so it is tested without I/O.
import type { ErrorSummary } from '../relay/protocol.js';
import type { SessionStatus } from '../schema/sessionState.js';
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
}

/** The page's whole view of one moment of the session. Pure. */
export function dashboardView(snapshot: ConversationSnapshot, status: DashboardStatus): DashboardView {
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
  };
}
