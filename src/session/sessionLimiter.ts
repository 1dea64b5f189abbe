// A streaming session under a shared concurrency slot: the slot is taken before the socket
// opens and given back when the session ends, whichever way it ends.
import { defer, from, switchMap, type Observable } from 'rxjs';
import { underLimiter } from '../concurrency/limiter.js';
import { modelOfPath } from '../schema/endpoints.js';
import { connectionKey, type SessionSettings } from './sessionSettings.js';

/**
 * The session `open(settings)` makes, under a slot of `settings.limiter` for its organization
 * and model; the session itself when there is no limiter. A key function is asked once here,
 * for the organization, and that answer is the first connection's key (the function is still
 * asked once per connection).
 */
export function underSessionSlot<T>(settings: SessionSettings, open: (settings: SessionSettings) => Observable<T>): Observable<T> {
  const source = settings.limiter;
  if (!source) return open(settings);
  const model = modelOfPath(settings.path) ?? settings.path;
  const slot = (apiKey: string, s: SessionSettings): Observable<T> => underLimiter(source.limiterFor({ model, baseUrl: settings.baseUrl, apiKey }), defer(() => open(s)));
  const given = settings.apiKey;
  if (typeof given === 'string') return slot(given, settings);
  return defer(() => from(Promise.resolve(connectionKey(given)))).pipe(
    switchMap((first) => {
      let asked = false;
      const firstThen = (): string | PromiseLike<string> => (asked ? given() : ((asked = true), first));
      return slot(first, Object.freeze({ ...settings, apiKey: firstThen }));
    }),
  );
}
