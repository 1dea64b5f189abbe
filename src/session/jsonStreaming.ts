// The streaming endpoints whose event shapes the contract does not show (§4.4): same
// handshake, limits and lifecycle; each frame passes through as validated JSON.
import { throwError, type Observable, type OperatorFunction } from 'rxjs';
import { z } from 'zod';
import type { AudioChunk } from '../audio/meta.js';
import { InputError } from '../errors/index.js';
import type { EventWarning } from '../warnings.js';
import type { ToleranceOptions } from './stats.js';
import type { Decoded, StreamingOptions } from './streamingSession.js';
import { ENDPOINTS, type StreamingEndpointName } from '../schema/endpoints.js';
import type { LimiterSource } from '../concurrency/limiter.js';
import { subscribeSession } from './sessionEntry.js';

/** Any JSON object frame; `type` when present. */
const JsonFrameSchema = z.looseObject({ type: z.string().optional() });
/** One JSON object frame from a JSON streaming endpoint (§4.4), fields kept as sent; `type` when present. */
export interface JsonFrame {
  readonly type?: string | undefined;
  readonly [field: string]: unknown;
}

/** A streaming endpoint of §4.4 that {@link streamJson} can talk to, named as in the endpoints table: `sttStreaming`, `syntheticVoiceDetectionStreaming` or `piiPhiRedactionStreaming`. */
export type JsonEndpoint = 'sttStreaming' | 'syntheticVoiceDetectionStreaming' | 'piiPhiRedactionStreaming';

const JSON_ENDPOINTS: readonly string[] = ['sttStreaming', 'syntheticVoiceDetectionStreaming', 'piiPhiRedactionStreaming'] satisfies readonly (JsonEndpoint & StreamingEndpointName)[];

export interface JsonStreamingOptions extends StreamingOptions, ToleranceOptions {
  /** Which endpoint: `sttStreaming`, `syntheticVoiceDetectionStreaming` or `piiPhiRedactionStreaming`. */
  readonly endpoint: JsonEndpoint;
  /** A first text frame to send before audio, if the endpoint wants one. Default: none. */
  readonly configFrame?: string | undefined;
  /** Take a concurrency slot from this source for the session's lifetime, as `analyzeConversation` does. */
  readonly limiter?: LimiterSource | undefined;
}

function jsonWarning(eventType: string, path: string, reason: string, action: EventWarning['action'], what: string): EventWarning {
  return { code: 'out_of_contract_value', eventType, path, reason, action, message: `${eventType} frame: ${path}: ${reason}; ${what}` };
}

/**
 * One frame: any JSON object. A `type` that is not a string (tolerated: delivered as
 * `{ type: 'unknown', data, reason }`; refused with `strict`) and an `error` frame whose
 * `error` is not text (made text in both modes) are the only odd values warned about.
 */
function decodeJson(text: string, strict: boolean): Decoded<JsonFrame> {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { ok: false, reason: 'frame is not valid JSON' };
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return { ok: false, reason: 'frame is not a JSON object' };
  const parsed = JsonFrameSchema.safeParse(value);
  if (!parsed.success) {
    const reason = `type: ${parsed.error.issues[0]?.message ?? 'invalid'}`;
    if (strict) return { ok: false, reason: `frame ${reason}` };
    const data = value as Record<string, unknown>;
    const warnings = [jsonWarning(String(JSON.stringify(data['type'])), 'type', reason, 'unknown', "the frame is delivered as type 'unknown'")];
    return { ok: true, value: { type: 'unknown', data, reason }, kind: 'event', warnings };
  }
  const frame = parsed.data;
  if (frame.type === 'done') return { ok: true, value: frame, kind: 'done' };
  if (frame.type === 'error') {
    const e = (frame as Record<string, unknown>)['error'];
    if (typeof e === 'string') return { ok: true, value: frame, kind: 'error', errorText: e };
    const reason = `expected string, received ${e === null ? 'null' : Array.isArray(e) ? 'array' : typeof e}`;
    // Made text in both modes, as before tolerance: these frames' shapes are not shown.
    const errorText = e === undefined || e === null ? '(no error text)' : JSON.stringify(e);
    const warnings = [jsonWarning('error', 'error', reason, 'text', 'delivered as text')];
    return { ok: true, value: { ...frame, error: errorText }, kind: 'error', errorText, warnings };
  }
  return { ok: true, value: frame, kind: 'event' };
}

/**
 * Stream audio to one of the other streaming endpoints and emit its frames as JSON.
 *
 * Cold, one socket per subscription, with the same lifecycle, errors and teardown as
 * `analyzeConversation`; frames are checked to be JSON objects, their fields are not known.
 * A non-string `type` (unless `strict: true`) or a non-text `error` is tolerated, counted in
 * `stats.warnings` and passed to `onWarning`.
 *
 * ## Example
 * ```ts
 * import { fileSource, streamJson } from 'svc-stream';
 *
 * fileSource('samples/call.wav').pipe(streamJson({ endpoint: 'sttStreaming' })).subscribe(console.log);
 * ```
 */
export function streamJson(options: JsonStreamingOptions): OperatorFunction<AudioChunk, JsonFrame> {
  return (audio$: Observable<AudioChunk>) => {
    if (!JSON_ENDPOINTS.includes(options.endpoint)) {
      return throwError(() => new InputError('invalid_argument', `unknown streaming endpoint ${JSON.stringify(options.endpoint)}; one of ${JSON_ENDPOINTS.join(', ')}`, { path: 'endpoint' }));
    }
    // One session, never resumed: these endpoints' events carry no times to resume from.
    return subscribeSession(audio$, options, { path: ENDPOINTS[options.endpoint].path, configFrame: options.configFrame }, { resumable: false, decode: decodeJson });
  };
}
