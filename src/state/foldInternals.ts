// The one RxJS shape every derived stream shares: fold events with a pure reducer, then
// emit the selected part only when it changes (by reference) from the part before.
import { Observable, scan, type OperatorFunction } from 'rxjs';
import type { ServerEvent } from '../schema/events.js';

/**
 * Emit `select(state)` for each state whose selected part is not `===` the previous one,
 * starting from `select(initial)` (which is never emitted itself). One subscriber hop
 * rather than `map` + `startWith` + `distinctUntilChanged` + `skip`: a session fans out
 * to a dozen of these per event.
 */
export function selectChanged<S, T>(select: (state: S) => T, initial: S): OperatorFunction<S, T> {
  const first = select(initial);
  return (source) =>
    new Observable<T>((subscriber) => {
      let last = first;
      return source.subscribe({
        next: (state) => {
          const part = select(state);
          if (part === last) return;
          last = part;
          subscriber.next(part);
        },
        error: (err: unknown) => subscriber.error(err),
        complete: () => subscriber.complete(),
      });
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
