// useObservable: the latest value of an observable as React state. Subscribes after render,
// unsubscribes on unmount or when the observable changes; an error is returned, not thrown,
// so a failed stream never crashes the page; `done` says it completed.
import { useEffect, useState } from 'react';
import type { Observable } from 'rxjs';

/** What {@link useObservable} returns: the latest value, the error if the stream failed, and whether it completed. */
export interface ObservedState<T> {
  readonly value: T;
  readonly error: unknown;
  readonly done: boolean;
}

/** The latest value of `observable$` (`initial` until it emits), its error, and whether it completed. */
export function useObservable<T>(observable$: Observable<T>, initial: T): ObservedState<T> {
  const [state, setState] = useState<ObservedState<T>>({ value: initial, error: undefined, done: false });
  useEffect(() => {
    const subscription = observable$.subscribe({
      next: (value) => setState((s) => ({ ...s, value })),
      error: (error: unknown) => setState((s) => ({ ...s, error })),
      complete: () => setState((s) => ({ ...s, done: true })),
    });
    return () => subscription.unsubscribe();
  }, [observable$]);
  return state;
}
