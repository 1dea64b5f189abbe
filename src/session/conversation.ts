// The conversation-analysis session: the config frame, the event parser and the operator
// users pipe audio into.
import type { Observable, OperatorFunction } from 'rxjs';
import type { AudioChunk } from '../audio/meta.js';
import type { SessionConfig } from '../schema/config.js';
import type { ServerEvent } from '../schema/events.js';
import { parseServerEvent } from '../schema/parseServerEvent.js';
import type { ToleranceOptions } from './stats.js';
import type { ReconnectOptions } from './reconnect.js';
import type { SessionEvent } from './SegmentClock.js';
import type { Decoded, StreamingOptions } from './streamingSession.js';
import { CONVERSATION_STREAMING_PATH } from './url.js';
import type { LimiterSource } from '../concurrency/limiter.js';
import { subscribeSession, type EndpointDecoder } from './sessionEntry.js';

export interface ConversationOptions extends StreamingOptions, ToleranceOptions {
  /** The analysis configuration: `'default'` (the default) or a BatchConfig, validated before connecting. */
  readonly config?: SessionConfig | undefined;
  /** Override the endpoint path (default `/api/svc-2-streaming`). */
  readonly path?: string | undefined;
  /**
   * Take a concurrency slot of the organization's model from this source before connecting,
   * and give it back when the session ends (complete, error, unsubscribe): a fleet's
   * `createRedisLimits(…)`. Default: none (the service refuses what is over its limit).
   */
  readonly limiter?: LimiterSource | undefined;
  /**
   * Reconnect and resume after a retryable failure (a lost, failed or silent connection, 1011,
   * a restart, a concurrency refusal at the handshake): on by default, `false` turns it off.
   * The new session gets the same config and the audio from the commit point, and its events
   * arrive on the same time axis (see docs/resilience.md for the policy and what can be lost).
   */
  readonly reconnect?: ReconnectOptions | false | undefined;
}

/**
 * One frame to one event. Tolerated values go with it, to be counted and reported by the
 * session; a `done` whose payload broke the contract still ends the session (delivered as
 * `unknown`, kind `done`).
 */
function decodeConversation(text: string, strict: boolean): Decoded<ServerEvent> {
  const r = parseServerEvent(text, { strict });
  if (!r.ok) return r;
  const e = r.event;
  const type = e.type === 'unknown' ? e.event_type : e.type;
  const warnings = r.warnings;
  if (type === 'done') return { ok: true, value: e, kind: 'done', warnings };
  if (e.type === 'error') return { ok: true, value: e, kind: 'error', errorText: e.error, warnings };
  return { ok: true, value: e, kind: 'event', warnings };
}

/**
 * Stream audio through conversation analysis and emit the server's events, normalised and
 * validated.
 *
 * - Cold: each subscription opens one WebSocket to `/api/svc-2-streaming` and subscribes to
 *   the audio once. Share the result (see {@link splitSession}) to feed several consumers.
 * - Sends exactly one config frame before any audio, the audio in binary frames (each chunk
 *   of a live source at once on an idle socket; chunks read while a frame is being written,
 *   or in bursts faster than the socket, coalesced into frames of up to 64 KiB), and an empty
 *   text frame when the audio completes.
 * - Emits every event, `error` and `done` included, in arrival order; completes on the close
 *   that follows `done`.
 * - Reconnects by default after a retryable failure once the first session has opened (see
 *   `reconnect` and docs/resilience.md): a new session with the same config, the audio resent
 *   from the end of the last finalized clip, events re-based onto the stream's time axis and
 *   tagged with their `segment`, duplicates of finalized clips dropped. `onStateChange` shows
 *   `reconnecting`; `stats` counts `reconnects`, `reconnectingMs`, `bytesReplayed`, `bytesDropped`.
 * - Errors with a SessionError on an `error` event (after emitting it), on any close before
 *   `done`, on a refused handshake, a connect timeout, a silent connection
 *   (`heartbeat_timeout`), a missing `done` after the end of audio, or a malformed frame (not
 *   JSON, binary, oversized), when no reconnect can cure it; with an InputError, before
 *   connecting, on an invalid config or audio parameters. An upstream error closes the socket
 *   and is re-thrown as is.
 * - An out-of-contract value inside a well-formed event does not end the session: the event
 *   is emitted with the value normalised, or as `{ type: 'unknown', reason }`, and the value is
 *   counted in `stats.warnings` and passed to `onWarning` (docs/tolerance.md). With
 *   `strict: true` it is a `malformed_frame` error instead.
 * - Unsubscribing closes the socket and unsubscribes from the audio.
 *
 * ## Example
 * ```ts
 * import { fileSource, analyzeConversation } from 'svc-stream';
 *
 * fileSource('samples/call.wav')
 *   .pipe(analyzeConversation({ apiKey: process.env.SVC_API_KEY, baseUrl: process.env.SVC_BASE_URL }))
 *   .subscribe({
 *     next: (event) => console.log(event.type, event.segment ?? 0, event),
 *     error: (err: unknown) => console.error('analysis failed:', err),
 *   });
 * ```
 */
export function analyzeConversation(options: ConversationOptions = {}): OperatorFunction<AudioChunk, SessionEvent> {
  return (audio$: Observable<AudioChunk>) => conversationSession(audio$, options);
}

/**
 * `analyzeConversation` in function form: `conversationSession(audio$, options)`. At each
 * subscription the options (and `SVC_API_KEY`, `SVC_BASE_URL`) are read once into the
 * session's settings; every connection of the subscription, reconnects included, uses them.
 */
export function conversationSession(audio$: Observable<AudioChunk>, options: ConversationOptions = {}): Observable<SessionEvent> {
  const decoder: EndpointDecoder<SessionEvent> = { resumable: true, decode: decodeConversation };
  return subscribeSession(audio$, options, { path: options.path ?? CONVERSATION_STREAMING_PATH, config: options.config }, decoder) as Observable<SessionEvent>;
}
