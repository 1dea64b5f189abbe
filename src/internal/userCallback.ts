// The one policy for a user's callback that throws (onStateChange, onWarning, onAudioWarning,
// onInput, …): the throw is reported as RxJS reports an error no subscriber can take, and
// changes nothing else: the library goes on as if the callback had returned.
import { config } from 'rxjs';

/**
 * Report `err` as RxJS does for an error nobody can take: to `config.onUnhandledError` when set,
 * otherwise thrown on a stack of its own (a timer), so it reaches `uncaughtException` and not
 * the library's code path.
 */
export function reportUnhandled(err: unknown): void {
  setTimeout(() => {
    const { onUnhandledError } = config;
    if (onUnhandledError) onUnhandledError(err);
    else throw err;
  });
}

/** Call a user's callback with `args`; a throw is {@link reportUnhandled reported} and otherwise ignored. */
export function callUser<A extends unknown[]>(callback: ((...args: A) => unknown) | undefined, ...args: A): void {
  if (callback === undefined) return;
  try {
    callback(...args);
  } catch (err) {
    reportUnhandled(err);
  }
}
