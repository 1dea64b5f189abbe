// What one call's analysis is, as analyzeCalls gives it and a CallRun fills it in: the call, its
// status and outcome, the counters over all calls. Types only.
import type { Observable } from 'rxjs';
import type { AudioChunk } from '../audio/meta.js';
import type { AudioFormat } from '../schema/audio.js';
import type { SessionStats } from '../session/stats.js';
import type { SessionStreams } from '../state/splitSession.js';
import type { ConversationSnapshot } from '../state/snapshot.js';

/** Anything with an id and audio: a `CallLeg`, a `MediaStreamCall`, or your own. */
export interface AnalyzableCall {
  readonly id: string;
  readonly audio$: Observable<AudioChunk>;
  /** The audio's format, when `audio$` does not carry it. */
  readonly format?: AudioFormat | undefined;
  /** Shown by pages where the session is published (`publish`): who is on the call. Default the id. */
  readonly title?: string | undefined;
}

/** Where one call is in `analyzeCalls`: waiting for a session slot, running, or ended (`done`, `error`, `rejected` when full). */
export type CallStatus = 'queued' | 'running' | 'done' | 'error' | 'rejected';

/** How a call ended. */
export interface CallOutcome {
  readonly status: 'done' | 'error' | 'rejected';
  /** The session's error (a SvcError), or the local rejection. */
  readonly error?: unknown | undefined;
  /** The conversation state when it ended. */
  readonly snapshot: ConversationSnapshot;
}

/** One call's analysis: its derived streams, counters and outcome. */
export interface CallAnalysis<C extends AnalyzableCall = AnalyzableCall> {
  readonly call: C;
  readonly id: string;
  /**
   * `splitSession` over the call's session: shared, replaying the current state to late
   * subscribers. These streams **never error**: when the call fails they keep their last state
   * and complete, and the failure is delivered as the call's outcome (`outcome$`), so a
   * subscription without an error callback cannot crash a process that bridges many calls.
   */
  readonly streams: SessionStreams;
  /** The session's live counters. */
  readonly stats: SessionStats;
  /** Where the call is now. */
  readonly status: CallStatus;
  /** How long the call waited for a session slot (so far, while `queued`), in ms: how stale its audio is when its session starts. */
  readonly queuedMs: number;
  /** Emits the outcome once, then completes (replayed to late subscribers). Never errors: a failure is an outcome with `status: 'error'`. */
  readonly outcome$: Observable<CallOutcome>;
}

/** Counters over all calls, updated in place. */
export interface AnalyzeCallsStats {
  calls: number;
  queued: number;
  running: number;
  peakRunning: number;
  done: number;
  /** Calls that failed (`status: 'error'`), those ended by `shutdown` apart. */
  failed: number;
  /** Calls ended by the service's shutdown: the drain deadline passed or a second signal came (`status: 'error'`, code `shutdown`). */
  shutdown: number;
  /** Calls refused: at arrival (`whenFull: 'reject'`) or after waiting `maxQueueMs` (also in `queueTimeouts`). */
  rejected: number;
  /** Calls refused because they waited `maxQueueMs` for a slot. */
  queueTimeouts: number;
  /** The longest wait for a slot of any call that got one, in ms. */
  peakQueuedMs: number;
}
