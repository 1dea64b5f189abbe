// A streaming session under a shared concurrency slot: the slot is taken before the socket
// opens and given back when the session ends, whichever way it ends.
import { defer, type Observable } from 'rxjs';
import { underLimiter, type LimiterSource } from '../limiter.js';
import { modelOfPath } from '../schema/endpoints.js';
import { readModelsCredentials } from '../credentials.js';

/**
 * `session$` under a slot of `source` for its organization and model; `session$` itself when
 * there is no source or no endpoint to tell the organization by (the session then reports
 * the missing setting as it always does).
 */
export function underSessionSlot<T>(
  source: LimiterSource | undefined,
  path: string,
  options: { readonly apiKey?: string | undefined; readonly baseUrl?: string | undefined },
  session$: Observable<T>,
): Observable<T> {
  if (!source) return session$;
  return defer(() => {
    const { apiKey, baseUrl } = readModelsCredentials(options);
    if (apiKey === undefined || baseUrl === undefined) return session$;
    const model = modelOfPath(path) ?? path;
    return underLimiter(source.limiterFor({ model, baseUrl, apiKey }), session$);
  });
}
