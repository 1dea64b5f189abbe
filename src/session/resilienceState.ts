// The resilient layer's state as a pure reducer: which phase a stream of sessions is in, the
// attempts counted, when its outage began, and where each event leads (reconnect after a
// failure, or fail; progress that ends an outage). No I/O, no timers: the layer applies it.
import { backoffMs, type ReconnectPolicy } from './reconnect.js';

/**
 * The phase of a stream of sessions, keyed by `status`:
 * - `connecting`: a session is opening (`first`: the stream's first; otherwise after a failure);
 * - `open`: a session opened; while `proving`, it has had no event and has not yet stayed up
 *   `minUptimeMs`, so the outage it ends is not over;
 * - `waiting`: between sessions, for `delayMs` (the backoff, cut at the deadline);
 * - `ended`: done, failed or unsubscribed; never left.
 */
export type ResiliencePhase =
  | { readonly status: 'connecting'; readonly first: boolean }
  | { readonly status: 'open'; readonly proving: boolean }
  | { readonly status: 'waiting'; readonly delayMs: number }
  | { readonly status: 'ended'; readonly how: 'done' | 'failed' | 'closed' };

/** The layer's state: its phase and what it counts across sessions. */
export interface ResilienceState {
  readonly phase: ResiliencePhase;
  /** Attempts in a row without progress of the commit point (the next `reconnecting.attempt`). */
  readonly tries: number;
  /** When the outage began (the first failure since a session that made progress); undefined: none. */
  readonly outageSince: number | undefined;
  /** When the last session failed, until one opens again (a session that opens then is a reconnect). */
  readonly downSince: number | undefined;
  /** The commit point when the last failure struck: attempts count again only after it moves past. */
  readonly failedAtCommitMs: number;
}

/** What happens to a stream of sessions. */
export type ResilienceEvent =
  /** The current session opened (its state is `streaming` or `paused`). */
  | { readonly type: 'opened'; readonly now: number }
  /** The current session delivered an event; `commitMs` is the commit point after it. */
  | { readonly type: 'event'; readonly commitMs: number }
  /** The current session stayed up `minUptimeMs`. */
  | { readonly type: 'uptime' }
  /**
   * The current session failed; `resumable`: the table says a new session can cure it and the
   * stream's format can resume; `random` in [0, 1) draws the jitter.
   */
  | { readonly type: 'failed'; readonly now: number; readonly resumable: boolean; readonly commitMs: number; readonly random: number }
  /** The backoff ran out: the next session starts. */
  | { readonly type: 'retry' }
  /** The current session completed (`done`). */
  | { readonly type: 'done' }
  /** The stream ends without its sessions: unsubscribed (`closed`), or failed by its source (`failed`). */
  | { readonly type: 'stopped'; readonly how: 'failed' | 'closed' };

/** A stream before its first session opened. */
export const initialResilienceState: ResilienceState = {
  phase: { status: 'connecting', first: true },
  tries: 0,
  outageSince: undefined,
  downSince: undefined,
  failedAtCommitMs: -1,
};

/**
 * The next state of a stream of sessions after `event`, under `policy`. An event that does not
 * apply to the phase returns `state` itself; `ended` is never left.
 */
export function resilienceReducer(state: ResilienceState, event: ResilienceEvent, policy: ReconnectPolicy): ResilienceState {
  const { phase } = state;
  if (phase.status === 'ended') return state;
  switch (event.type) {
    case 'opened':
      if (phase.status !== 'connecting') return state;
      // Proven at once when there is no outage to end (the first session, or one after progress).
      return { ...state, phase: { status: 'open', proving: state.outageSince !== undefined }, downSince: undefined };
    case 'event': {
      if (phase.status !== 'open') return state;
      const tries = state.tries > 0 && event.commitMs > state.failedAtCommitMs ? 0 : state.tries;
      if (!phase.proving && tries === state.tries) return state;
      return { ...state, tries, ...(phase.proving ? { phase: { status: 'open', proving: false }, outageSince: undefined } : {}) };
    }
    case 'uptime':
      if (phase.status !== 'open' || !phase.proving) return state;
      return { ...state, phase: { status: 'open', proving: false }, outageSince: undefined };
    case 'failed': {
      if (phase.status !== 'connecting' && phase.status !== 'open') return state;
      const fail: ResilienceState = { ...state, phase: { status: 'ended', how: 'failed' } };
      // The first connection is not retried: a wrong URL or key, a service down, is said at once.
      if (phase.status === 'connecting' && phase.first) return fail;
      if (!event.resumable || state.tries + 1 > policy.maxAttempts) return fail;
      const since = state.outageSince ?? event.now;
      const left = policy.deadlineMs - (event.now - since);
      if (left <= 0) return fail;
      const tries = state.tries + 1;
      const delayMs = Math.max(0, Math.min(backoffMs(policy, tries, event.random), left));
      return { phase: { status: 'waiting', delayMs }, tries, outageSince: since, downSince: event.now, failedAtCommitMs: event.commitMs };
    }
    case 'retry':
      if (phase.status !== 'waiting') return state;
      return { ...state, phase: { status: 'connecting', first: false } };
    case 'done':
      if (phase.status !== 'connecting' && phase.status !== 'open') return state;
      return { ...state, phase: { status: 'ended', how: 'done' } };
    case 'stopped':
      return { ...state, phase: { status: 'ended', how: event.how } };
  }
}
