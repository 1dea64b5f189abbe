// The life cycle of a service that takes calls, as a pure reducer: `starting → ready →
// draining → stopped`, the one shape LiveKit's workers and Kubernetes' probes share.

/**
 * Where a service is, keyed by `status`:
 * - `starting`: not listening yet (`/readyz` false).
 * - `ready`: taking calls (`/readyz` true unless a server is full or a dependency is down).
 * - `draining`: taking no new call; the calls in flight run to their end until `deadline`
 *   (epoch ms; none when the drain has no deadline), then are ended `shutdown`. `forced`: they
 *   were (the deadline passed or a second signal came).
 * - `stopped`: every call ended; nothing runs. Terminal.
 *
 * `reason` says what started the drain (`signal`, `exit-after`, `parent-exited`, `failed`, …).
 */
export type ServiceState =
  | { readonly status: 'starting' }
  | { readonly status: 'ready' }
  | { readonly status: 'draining'; readonly reason: string; readonly deadline: number | undefined; readonly forced: boolean }
  | { readonly status: 'stopped'; readonly reason: string; readonly forced: boolean };

/** The name of a service state: `starting`, `ready`, `draining` or `stopped`. */
export type ServiceStatus = ServiceState['status'];

/** What moves a service's state (see {@link serviceReducer}). */
export type ServiceEvent =
  /** Every server listens. */
  | { readonly type: 'listening' }
  /** Stop taking calls; end those in flight at `deadline` (epoch ms) or never (undefined). */
  | { readonly type: 'drain'; readonly reason: string; readonly deadline: number | undefined }
  /** End the calls in flight now (the deadline passed, a second signal). */
  | { readonly type: 'force'; readonly reason: string }
  /** No call is in flight any more. */
  | { readonly type: 'idle' };

/** Where every service life cycle starts: `starting`, until its servers listen. */
export const INITIAL_SERVICE_STATE: ServiceState = { status: 'starting' };

/**
 * The one transition of a service's state. Pure; an event that does not apply returns the same
 * object (so a caller can tell nothing changed by identity):
 * - `listening` moves `starting` to `ready`.
 * - `drain` moves `starting` or `ready` to `draining` (a later drain keeps the first's reason and
 *   the earlier deadline).
 * - `force` moves `starting`, `ready` or `draining` to `draining` with `forced` (a second signal,
 *   or the deadline).
 * - `idle` moves `draining` to `stopped`, keeping its reason and whether it was forced.
 */
export function serviceReducer(state: ServiceState, event: ServiceEvent): ServiceState {
  switch (event.type) {
    case 'listening':
      return state.status === 'starting' ? { status: 'ready' } : state;
    case 'drain':
      if (state.status === 'starting' || state.status === 'ready') return { status: 'draining', reason: event.reason, deadline: event.deadline, forced: false };
      if (state.status === 'draining' && event.deadline !== undefined && (state.deadline === undefined || event.deadline < state.deadline)) return { ...state, deadline: event.deadline };
      return state;
    case 'force':
      if (state.status === 'starting' || state.status === 'ready') return { status: 'draining', reason: event.reason, deadline: undefined, forced: true };
      if (state.status === 'draining' && !state.forced) return { ...state, forced: true };
      return state;
    case 'idle':
      return state.status === 'draining' ? { status: 'stopped', reason: state.reason, forced: state.forced } : state;
  }
}
