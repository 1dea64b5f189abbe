// How an entry (analyzeConversation, streamJson) subscribes a session: its options read once
// into the settings, the stats it writes, `onStateChange` following them, the concurrency slot,
// and the session itself (resumable or plain).
import { defer, finalize, throwError, type Observable } from 'rxjs';
import { audioMetaOf, type AudioChunk } from '../audio/meta.js';
import type { ServerEvent } from '../schema/events.js';
import { resolveSessionSettings, type EndpointOptions, type SessionOptionsRead, type SessionSettings } from './sessionSettings.js';
import { createSessionStats, stateStoreOf, type SessionStats } from './stats.js';
import { followState } from './StateStore.js';
import { underSessionSlot } from './sessionLimiter.js';
import { resilientSession } from './resilientSession.js';
import { streamingSession, type Decoded } from './streamingSession.js';

/** How an endpoint's frames decode, and whether its events can be resumed (they carry times). */
export type EndpointDecoder<T> =
  | { readonly resumable: true; decode(text: string, strict: boolean): Decoded<T & ServerEvent> }
  | { readonly resumable: false; decode(text: string, strict: boolean): Decoded<T> };

/**
 * At each subscription: the settings resolved from `options` and the environment, once (an
 * option in error fails the subscription with its InputError, and the stats' state with it,
 * `onStateChange` not being told: nothing started),
 * then the session with them and the stats (`options.stats`, or counters of its own): a
 * resilient one when the decoder's events can be resumed and the policy allows, else a plain
 * one; under the concurrency slot when a limiter is given. `onStateChange` follows the stats'
 * state for as long as the subscription lasts.
 */
export function subscribeSession<T>(
  audio$: Observable<AudioChunk>,
  options: SessionOptionsRead & { readonly stats?: SessionStats | undefined },
  endpoint: EndpointOptions,
  decoder: EndpointDecoder<T>,
): Observable<T> {
  return defer(() => {
    const stats = options.stats ?? createSessionStats();
    let settings: SessionSettings;
    try {
      settings = resolveSessionSettings(options, endpoint, audioMetaOf(audio$)?.format);
    } catch (err) {
      // Nothing started: the error is the subscription's, and the stats say so.
      stateStoreOf(stats).set({ status: 'failed', error: err });
      return throwError(() => err);
    }
    const store = stateStoreOf(stats);
    // A new subscription starts again from `connecting` (stats given to one before).
    if (store.value.status !== 'connecting') store.set({ status: 'connecting' });
    const opened = openSession(audio$, decoder, settings, stats);
    const session$ = underSessionSlot(settings, opened);
    const following = followState(stats.state$, settings.onStateChange);
    return following === undefined ? session$ : session$.pipe(finalize(() => following.unsubscribe()));
  });
}

/** The session itself: resilient over a resumable decoder with a reconnect policy, else plain. */
function openSession<T>(audio$: Observable<AudioChunk>, decoder: EndpointDecoder<T>, settings: SessionSettings, stats: SessionStats): Observable<T> {
  const strict = settings.strict;
  if (decoder.resumable && settings.reconnect !== undefined) return resilientSession(audio$, (text) => decoder.decode(text, strict), settings, stats) as Observable<T>;
  return streamingSession(audio$, (text: string) => decoder.decode(text, strict) as Decoded<T>, settings, stats);
}
