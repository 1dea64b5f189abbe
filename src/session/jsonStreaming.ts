// The streaming endpoints whose event shapes the contract does not show (§4.4): same
// handshake, limits and lifecycle; each frame passes through as validated JSON.
import { throwError, type Observable, type OperatorFunction } from 'rxjs';
import { z } from 'zod';
import type { AudioChunk } from '../audio/meta.js';
import { InputError } from '../errors.js';
import { streamingSession, type Decoded, type StreamingOptions } from './streamingSession.js';
import { STREAMING_PATHS } from './url.js';
import type { LimiterSource } from '../internal/limiter.js';
import { underSessionSlot } from './sessionLimiter.js';

/** Any JSON object frame; `type` when present. */
export const JsonFrameSchema = z.looseObject({ type: z.string().optional() });
export type JsonFrame = z.infer<typeof JsonFrameSchema>;

export type JsonEndpoint = Exclude<keyof typeof STREAMING_PATHS, 'conversation'>;

export interface JsonStreamingOptions extends StreamingOptions {
  /** Which endpoint: `stt`, `syntheticVoiceDetection` or `piiPhiRedaction`. */
  readonly endpoint: JsonEndpoint;
  /** A first text frame to send before audio, if the endpoint wants one. Default: none. */
  readonly configFrame?: string | undefined;
  /** Take a concurrency slot from this source for the session's lifetime, as `analyzeConversation` does. */
  readonly limiter?: LimiterSource | undefined;
}

function decodeJson(text: string): Decoded<JsonFrame> {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { ok: false, reason: 'frame is not valid JSON' };
  }
  const parsed = JsonFrameSchema.safeParse(value);
  if (!parsed.success) return { ok: false, reason: 'frame is not a JSON object' };
  const frame = parsed.data;
  if (frame.type === 'done') return { ok: true, value: frame, kind: 'done' };
  if (frame.type === 'error') {
    const e = (frame as Record<string, unknown>)['error'];
    return { ok: true, value: frame, kind: 'error', errorText: typeof e === 'string' ? e : JSON.stringify(e ?? 'error') };
  }
  return { ok: true, value: frame, kind: 'event' };
}

/**
 * Stream audio to one of the other streaming endpoints and emit its frames as JSON.
 *
 * Cold, one socket per subscription, with the same lifecycle, errors and teardown as
 * `analyzeConversation`; frames are checked to be JSON objects, their fields are not known.
 *
 * ## Example
 * ```ts
 * import { fileSource, streamJson } from 'svc-stream';
 *
 * fileSource('samples/call.wav').pipe(streamJson({ endpoint: 'stt' })).subscribe(console.log);
 * ```
 */
export function streamJson(options: JsonStreamingOptions): OperatorFunction<AudioChunk, JsonFrame> {
  return (audio$: Observable<AudioChunk>) => {
    const path = STREAMING_PATHS[options.endpoint];
    if (path === undefined) {
      return throwError(() => new InputError('invalid_argument', `unknown streaming endpoint ${JSON.stringify(options.endpoint)}; one of ${Object.keys(STREAMING_PATHS).filter((k) => k !== 'conversation').join(', ')}`, { path: 'endpoint' }));
    }
    return underSessionSlot(options.limiter, path, options, streamingSession(audio$, { path, configFrame: options.configFrame, decode: decodeJson }, options));
  };
}
