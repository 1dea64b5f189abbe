// The conversation-analysis session: the config frame, the event parser and the operator
// users pipe audio into.
import { throwError, type Observable, type OperatorFunction } from 'rxjs';
import type { AudioChunk } from '../audio/meta.js';
import { InputError } from '../errors.js';
import { BatchConfigSchema, type SessionConfig } from '../schema/config.js';
import { parseServerEvent, type ServerEvent } from '../schema/events.js';
import { streamingSession, type Decoded, type StreamingOptions, type StreamProtocol } from './streamingSession.js';
import { CONVERSATION_STREAMING_PATH } from './url.js';
import type { LimiterSource } from '../internal/limiter.js';
import { underSessionSlot } from './sessionLimiter.js';

export interface ConversationOptions extends StreamingOptions {
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
}

/**
 * Validate a config and render the config frame. Throws InputError (`invalid_config`) naming
 * the offending path, e.g. `stt.custom_terms.3.term: term must not be empty`.
 */
export function configFrame(config: SessionConfig | undefined): string {
  if (config === undefined || config === 'default') return 'default';
  const parsed = BatchConfigSchema.safeParse(config);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const path = issue.path.join('.');
    throw new InputError('invalid_config', `invalid config at ${path || '(root)'}: ${issue.message}`, { path, detail: parsed.error.issues });
  }
  return JSON.stringify(parsed.data);
}

function decodeConversation(text: string): Decoded<ServerEvent> {
  const r = parseServerEvent(text);
  if (!r.ok) return r;
  const e = r.event;
  if (e.type === 'done') return { ok: true, value: e, kind: 'done' };
  if (e.type === 'error') return { ok: true, value: e, kind: 'error', errorText: e.error };
  return { ok: true, value: e, kind: 'event' };
}

/** The protocol of the conversation-analysis socket, for `streamingSession`. */
export function conversationProtocol(config: SessionConfig | undefined, path = CONVERSATION_STREAMING_PATH): StreamProtocol<ServerEvent> {
  return { path, configFrame: configFrame(config), decode: decodeConversation };
}

/**
 * Stream audio through conversation analysis and emit the server's events, normalised and
 * validated.
 *
 * - Cold: each subscription opens one WebSocket to `/api/svc-2-streaming` and subscribes to
 *   the audio once. Share the result (see `deriveStreams`) to feed several consumers.
 * - Sends exactly one config frame before any audio, each chunk as a binary frame, and an
 *   empty text frame when the audio completes.
 * - Emits every event, `error` and `done` included, in arrival order; completes on the close
 *   that follows `done`.
 * - Errors with a SessionError on an `error` event (after emitting it), on any close before
 *   `done`, on a refused handshake, a connect timeout, a missing `done` after the end of audio,
 *   or a malformed frame; with an InputError, before connecting, on an invalid config or audio
 *   parameters. An upstream error closes the socket and is re-thrown as is.
 * - Unsubscribing closes the socket and unsubscribes from the audio.
 *
 * ## Example
 * ```ts
 * import { fileSource, analyzeConversation } from 'svc-stream';
 *
 * fileSource('samples/call.wav')
 *   .pipe(analyzeConversation({ apiKey: process.env.SVC_API_KEY, baseUrl: process.env.SVC_BASE_URL }))
 *   .subscribe((event) => console.log(event.type, event));
 * ```
 */
export function analyzeConversation(options: ConversationOptions = {}): OperatorFunction<AudioChunk, ServerEvent> {
  return (audio$: Observable<AudioChunk>) => conversationSession(audio$, options);
}

/** `analyzeConversation` in function form: `conversationSession(audio$, options)`. */
export function conversationSession(audio$: Observable<AudioChunk>, options: ConversationOptions = {}): Observable<ServerEvent> {
  let protocol: StreamProtocol<ServerEvent>;
  try {
    protocol = conversationProtocol(options.config, options.path);
  } catch (err) {
    return throwError(() => err);
  }
  return underSessionSlot(options.limiter, protocol.path, options, streamingSession(audio$, protocol, options));
}
