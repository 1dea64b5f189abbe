// A session's state as a stream, ngrx-store style: one owner sets it, anyone reads the current
// value or subscribes; a subscriber gets the last state first, then every change in order, and
// the stream never errors. `onStateChange` is one subscriber among others.
import { Observable, type Subscription } from 'rxjs';
import type { SessionState } from '../schema/sessionState.js';
import { callUser } from '../internal/userCallback.js';

const CONNECTING: SessionState = { status: 'connecting' };

interface Listener {
  last: SessionState;
  /** Changes being delivered when it subscribed are behind it: it starts after them. */
  since: number;
  readonly next: (state: SessionState) => void;
}

/**
 * The state of one session (or of a resilient stream of sessions): {@link StateStore.value} is
 * the source of truth, changed only by {@link StateStore.set}; {@link StateStore.state$} is hot,
 * replays the current state to each new subscriber and never errors or completes. A change set
 * while earlier ones are being delivered (a subscriber that reacts synchronously) is delivered
 * after them, so every subscriber sees every change in the order set.
 */
export class StateStore {
  private current: SessionState;
  private readonly listeners = new Set<Listener>();
  private pending: SessionState[] | undefined;
  /** Hot: the current state at once, then each change; never errors, never completes. */
  readonly state$: Observable<SessionState>;

  constructor(initial: SessionState = CONNECTING) {
    this.current = initial;
    this.state$ = new Observable<SessionState>((subscriber) => {
      const listener: Listener = { last: this.current, since: this.pending?.length ?? 0, next: (s) => subscriber.next(s) };
      this.listeners.add(listener);
      subscriber.next(this.current);
      return () => this.listeners.delete(listener);
    });
  }

  /** The state now. */
  get value(): SessionState {
    return this.current;
  }

  /** Enter `next` and tell every subscriber (after the changes still being delivered). */
  set(next: SessionState): void {
    this.current = next;
    if (this.pending !== undefined) {
      this.pending.push(next);
      return;
    }
    this.pending = [next];
    try {
      for (let i = 0; i < this.pending.length; i++) {
        const s = this.pending[i]!;
        for (const l of this.listeners) {
          if (i < l.since || l.last === s) continue;
          l.last = s;
          l.next(s);
        }
      }
    } finally {
      this.pending = undefined;
      for (const l of this.listeners) l.since = 0;
    }
  }
}

/**
 * Call `onStateChange(old, new)` for every change `state$` shows after the first value, through
 * the one user-callback policy (a throw is reported and changes nothing). Returns the subscription.
 */
export function followState(state$: Observable<SessionState>, onStateChange: ((oldState: SessionState, newState: SessionState) => void) | undefined): Subscription | undefined {
  if (onStateChange === undefined) return undefined;
  let previous: SessionState | undefined;
  return state$.subscribe((next) => {
    const old = previous;
    previous = next;
    if (old !== undefined && old !== next) callUser(onStateChange, old, next);
  });
}
