// How an entry (analyzeConversation, streamJson) subscribes a session: its options read once
// into the settings, the stats it writes, `onStateChange` following them, the concurrency slot.
import { defer, finalize, throwError, type Observable } from 'rxjs';
import { audioMetaOf, type AudioChunk } from '../audio/meta.js';
import { resolveSessionSettings, type SessionEndpoint, type SessionOptionsRead, type SessionSettings } from './sessionSettings.js';
import { createSessionStats, stateStoreOf, type SessionStats } from './stats.js';
import { followState } from './StateStore.js';
import { underSessionSlot } from './sessionLimiter.js';

/**
 * At each subscription: the settings resolved from `options` and the environment, once (an
 * option in error fails the subscription with its InputError, and the stats' state with it),
 * then the session `open` makes with them and the stats (`options.stats`, or counters of its
 * own), under the concurrency slot when a limiter is given. `onStateChange` follows the
 * stats' state for as long as the subscription lasts.
 */
export function subscribeSession<T>(
  audio$: Observable<AudioChunk>,
  options: SessionOptionsRead & { readonly stats?: SessionStats | undefined },
  /** The endpoint's path and config frame, checked here with the other options (throws InputError). */
  endpoint: () => SessionEndpoint,
  open: (settings: SessionSettings, stats: SessionStats) => Observable<T>,
): Observable<T> {
  return defer(() => {
    const stats = options.stats ?? createSessionStats();
    const store = stateStoreOf(stats);
    // A new subscription starts again from `connecting` (stats given to one before).
    if (store.value.status !== 'connecting') store.set({ status: 'connecting' });
    const following = followState(stats.state$, options.onStateChange);
    let settings: SessionSettings;
    try {
      settings = resolveSessionSettings(options, endpoint(), audioMetaOf(audio$)?.format);
    } catch (err) {
      store.set({ status: 'failed', error: err });
      following?.unsubscribe();
      return throwError(() => err);
    }
    const session$ = underSessionSlot(settings, (s) => open(s, stats));
    return following === undefined ? session$ : session$.pipe(finalize(() => following.unsubscribe()));
  });
}
