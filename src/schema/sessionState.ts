// The one life-cycle vocabulary of a streaming session, shared by the client and the emulator:
// its states, keyed by `status`. The state machine (src/session/streamingSession.ts) moves
// through them and reports each move to `onStateChange`; the stats, the CLI, the emulator's
// connection summaries and the docs name a session's state with these words.

/**
 * The states of one session, keyed by `status` (see docs/streaming-session.md):
 * - `connecting`: the handshake is under way; audio read meanwhile is queued.
 * - `streaming`: open; the config frame went first, each chunk goes as it arrives (held and
 *   coalesced with the next ones while an earlier frame is still being written, or while the
 *   source reads in bursts faster than the socket).
 * - `paused`: open, a pull-capable source paused until the socket drains below half the high-water mark.
 * - `finishing`: the audio ended and the end-of-audio frame went; waiting for `done`.
 * - `closing`: no more audio is read; waiting for the server's close after `done` (`reason: 'done'`),
 *   after an `error` event (`'error'`), or after the connection was lost mid-send (`'lost'`).
 * - `reconnecting`: (with `reconnect`, on by default) a session failed in a way a new one can
 *   cure; `attempt` is the next attempt (1, 2, …), `error` the failure. Reported by the
 *   reconnecting layer above one session (docs/resilience.md), followed by `connecting`.
 * - `done` (completed), `failed` (errored with `error`), `closed` (unsubscribed): terminal.
 */
export type SessionState =
  | { readonly status: 'connecting' }
  | { readonly status: 'streaming' }
  | { readonly status: 'paused' }
  | { readonly status: 'finishing' }
  | { readonly status: 'closing'; readonly reason: 'done' | 'error' | 'lost' }
  | { readonly status: 'reconnecting'; readonly attempt: number; readonly error: unknown }
  | { readonly status: 'done' }
  | { readonly status: 'failed'; readonly error: unknown }
  | { readonly status: 'closed' };

/** The name of a session state: `connecting`, `streaming`, `paused`, `finishing`, `closing`, `reconnecting`, `done`, `failed` or `closed`. */
export type SessionStatus = SessionState['status'];

/** Whether a session in `status` has ended (`done`, `failed` or `closed`): it never moves again. */
export function isTerminalStatus(status: SessionStatus): boolean {
  return status === 'done' || status === 'failed' || status === 'closed';
}
