// A streaming session under a shared concurrency slot: the slot is taken before the socket
// opens and given back when the session ends, whichever way it ends.
import { defer, from, switchMap, type Observable } from 'rxjs';
import { underLimiter } from '../concurrency/limiter.js';
import { modelOfPath } from '../schema/endpoints.js';
import type { SessionSettings } from './sessionSettings.js';

/**
 * `session$` under a slot of `settings.limiter` for its organization and model; `session$`
 * itself when there is no limiter. With a key function, the slot is named by the key the first
 * connection will use (asked once here; that connection gets the same answer).
 */
export function underSessionSlot<T>(settings: SessionSettings, session$: Observable<T>): Observable<T> {
  const source = settings.limiter;
  if (!source) return session$;
  const model = modelOfPath(settings.path) ?? settings.path;
  const key = settings.apiKey;
  if (typeof key === 'string') return underLimiter(source.limiterFor({ model, baseUrl: settings.baseUrl, apiKey: key }), session$);
  return defer(() => from(Promise.resolve(key.peek()))).pipe(switchMap((apiKey) => underLimiter(source.limiterFor({ model, baseUrl: settings.baseUrl, apiKey }), session$)));
}
