// The one RxJS shape every derived stream shares: fold events with a pure reducer, then
// emit the selected part only when it changes (by reference) from the part before.
import { scan, type OperatorFunction } from 'rxjs';
import type { ServerEvent } from '../schema/events.js';
import { operate, operatorSubscriber } from './operate.js';

/**
 * Emit `select(state)` for each state whose selected part is not `===` the previous one,
 * starting from `select(initial)` (which is never emitted itself). One subscriber hop
 * rather than `map` + `startWith` + `distinctUntilChanged` + `skip`: a session fans out
 * to a dozen of these per event.
 */
export function selectChanged<S, T>(select: (state: S) => T, initial: S): OperatorFunction<S, T> {
  // A throw from `select` errors the stream and unsubscribes upstream, as in RxJS's own operators.
  return operate<S, T>((source, subscriber) => {
    let last = select(initial);
    source.subscribe(
      operatorSubscriber<S>(subscriber, {
        next: (state) => {
          const part = select(state);
          if (part === last) return;
          last = part;
          subscriber.next(part);
        },
      }),
    );
  });
}

/** `scan(reducer, initial)` followed by {@link selectChanged}. */
export function foldState<S, T>(
  reducer: (state: S, event: ServerEvent) => S,
  initial: S,
  select: (state: S) => T,
): OperatorFunction<ServerEvent, T> {
  return (source) => source.pipe(scan(reducer, initial), selectChanged(select, initial));
}

/** Type guard for dropping the initial null of a part that, once set, is never null again. */
export function isSet<T>(value: T | null): value is T {
  return value !== null;
}
