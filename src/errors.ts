// The one error hierarchy. Every failure is an SvcError with a stable `code`, the HTTP
// status or close code where there is one, the server's `detail`, and `retryable`.
import { ErrorResponseSchema, HTTPValidationErrorSchema, type ValidationError } from './schema/errorBody.js';
import { redact, redactDeep } from './redact.js';

/** Every stable error code. The README lists each with its meaning. */
export const ERROR_CODES = [
  // Authentication and access (§5)
  'invalid_api_key',
  'no_model_access',
  'not_permitted',
  'usage_denied',
  // Limits (§7.2, §7.4, §8)
  'insufficient_credits',
  'concurrency_limit',
  'monthly_usage_limit',
  'monthly_credit_limit',
  'limit_exceeded',
  'rate_limited',
  // Input rejected by the service (§7.1)
  'unsupported_format',
  'empty_file',
  'corrupt_audio',
  'audio_too_short',
  'invalid_request',
  'validation_error',
  'invalid_config',
  'invalid_audio_params',
  'invalid_audio',
  'protocol_error',
  // Service-side failures
  'internal_error',
  'service_unavailable',
  'upstream_unavailable',
  'timeout',
  'not_found',
  'http_error',
  // The HTTP client's own guards (docs/security.md)
  'redirect_refused',
  'response_too_large',
  'response_timeout',
  // Streaming session lifecycle
  'connection_failed',
  'connection_lost',
  'connect_timeout',
  'heartbeat_timeout',
  'service_restart',
  'done_timeout',
  'missing_done',
  'unexpected_close',
  'handshake_rejected',
  'malformed_frame',
  'invalid_response',
  'backpressure_overflow',
  // Local checks before anything is sent
  'file_not_found',
  'file_too_large',
  'invalid_argument',
  // Audio sources
  'ffmpeg_not_found',
  'ffmpeg_failed',
  'source_error',
  'aborted',
  // Orchestration jobs (§4.5)
  'job_failed',
  'job_unknown_state',
  'poll_deadline',
  // Fleet coordination through Redis (docs/fleet.md)
  'redis_unavailable',
  'slot_timeout',
  'lease_lost',
  // The relay between a Node session and browser pages (docs/browser.md)
  'relay_unauthorized',
  'relay_origin_refused',
  'relay_busy',
  'relay_gap',
  // An optional peer dependency a feature needs is not installed
  'missing_dependency',
] as const;
/** A stable error code, one of {@link ERROR_CODES}; branch on `err.code`, not on the message. */
export type ErrorCode = (typeof ERROR_CODES)[number];

/** Audio accounting attached to a session failure: every byte read is sent or reported unsent. */
export interface AudioAccount {
  /** Bytes received from the audio source. */
  readonly read: number;
  /** Bytes handed to the socket and flushed. */
  readonly sent: number;
  /** Bytes read but not flushed when the session failed. */
  readonly unsent: number;
}

/** What an {@link SvcError} carries besides its code and message: HTTP status or close code, the server's `detail`, `retryable`, the cause and the audio account. */
export interface SvcErrorOptions {
  readonly status?: number | undefined;
  readonly closeCode?: number | undefined;
  readonly detail?: unknown | undefined;
  readonly retryable?: boolean | undefined;
  readonly cause?: unknown | undefined;
  readonly audio?: AudioAccount | undefined;
  /**
   * Keys the caller gave (API key, platform key): masked in the message, detail, body and
   * cause (see docs/security.md). Nothing is remembered between errors: whoever builds an
   * error from text a server sent passes the keys of that call or session.
   */
  readonly secrets?: readonly (string | undefined)[] | undefined;
}

function secretsOf(options: SvcErrorOptions): readonly (string | undefined)[] {
  return options.secrets ?? [];
}

/** For a subclass's own fields (a job record…): `value` masked as SvcError masks its detail. */
export function maskSecrets<T>(value: T, options: SvcErrorOptions): T {
  return redactDeep(value, secretsOf(options));
}

/** A cause that shows a key (in its message or stack) is replaced by a masked copy. */
function maskedCause(cause: unknown, secrets: readonly (string | undefined)[]): unknown {
  if (cause instanceof Error) {
    const text = `${cause.message}\n${cause.stack ?? ''}`;
    if (redact(text, secrets) === text) return cause;
    const copy = new Error(redact(cause.message, secrets));
    copy.name = cause.name;
    copy.stack = redact(cause.stack ?? '', secrets);
    return copy;
  }
  return redactDeep(cause, secrets);
}

/** The base of every error this library throws or emits. */
export class SvcError extends Error {
  override readonly name: string = 'SvcError';
  readonly code: ErrorCode;
  /** HTTP status, where the failure came from an HTTP response (including a WebSocket handshake). */
  readonly status: number | undefined;
  /** WebSocket close code, where the failure came from a close. */
  readonly closeCode: number | undefined;
  /** The server's `detail` (a string, or the 422 list), or the `error` event's text. */
  readonly detail: unknown;
  /** Whether trying the same request again can help (§7.4). */
  readonly retryable: boolean;
  readonly audio: AudioAccount | undefined;

  /**
   * The one place every error of the library is built: the message, detail and cause are
   * masked here (see SvcErrorOptions.secrets), so no key a server echoes reaches a user.
   */
  constructor(code: ErrorCode, message: string, options: SvcErrorOptions = {}) {
    const secrets = secretsOf(options);
    super(redact(message, secrets), options.cause === undefined ? undefined : { cause: maskedCause(options.cause, secrets) });
    this.code = code;
    this.status = options.status;
    this.closeCode = options.closeCode;
    this.detail = redactDeep(options.detail, secrets);
    this.retryable = options.retryable ?? false;
    this.audio = options.audio;
  }

  /** A one-line description with the code, for logs and CLIs. */
  override toString(): string {
    const where = this.status !== undefined ? ` (HTTP ${this.status})` : this.closeCode !== undefined ? ` (close ${this.closeCode})` : '';
    return `${this.code}${where}: ${this.message}`;
  }
}

/** An HTTP response of the models or orchestration API that was not a success. */
export class ApiError extends SvcError {
  override readonly name: string = 'ApiError';
  /** The parsed response body, when it was JSON. */
  readonly body: unknown;
  /** The 422 validation entries (`loc`, `msg`, `type`), when the body had them. */
  readonly validationErrors: readonly ValidationError[] | undefined;
  constructor(code: ErrorCode, message: string, options: SvcErrorOptions & { body?: unknown; validationErrors?: readonly ValidationError[] }) {
    super(code, message, options);
    const secrets = secretsOf(options);
    this.body = redactDeep(options.body, secrets);
    this.validationErrors = redactDeep(options.validationErrors, secrets);
  }
}

/**
 * A streaming session that ended in anything but `done` followed by a normal close, except a
 * frame the contract does not allow, which is a {@link ContractError} (`malformed_frame`).
 */
export class SessionError extends SvcError {
  override readonly name: string = 'SessionError';
}

/** Input refused locally, before anything was sent (config, audio parameters, files, options). */
export class InputError extends SvcError {
  override readonly name: string = 'InputError';
  /** Where in the input the problem is: a config path such as `stt.custom_terms.3.term`, an option's name, or the file refused (`file_not_found`, `empty_file`, …). */
  readonly path: string | undefined;
  constructor(code: ErrorCode, message: string, options: SvcErrorOptions & { path?: string } = {}) {
    super(code, message, options);
    this.path = options.path;
  }
}

/**
 * The server sent something the contract does not allow, over either transport: an HTTP body
 * (`invalid_response`) or a WebSocket frame (`malformed_frame`, with the session's `audio`
 * account and, for a frame ws refused, the `closeCode`).
 */
export class ContractError extends SvcError {
  override readonly name: string = 'ContractError';
}

/** A relay of session events refused a page or a client, or its stream broke (docs/browser.md). */
export class RelayError extends SvcError {
  override readonly name: string = 'RelayError';
}

/** A local audio source failed (ffmpeg, files, streams). */
export class AudioSourceError extends SvcError {
  override readonly name: string = 'AudioSourceError';
}

interface Classified {
  readonly code: ErrorCode;
  readonly retryable: boolean;
}

/**
 * Classify a `detail` string (§7.1, §7.2): the detail decides, because statuses are shared
 * between causes and some endpoints answer 403 or 429 for everything.
 */
export function classifyDetail(detail: string): Classified | undefined {
  const d = detail.trim();
  const l = d.toLowerCase();
  if (d === 'Invalid API key.' || /invalid api key|api key (is )?(invalid|missing|not recognized)/.test(l)) return { code: 'invalid_api_key', retryable: false };
  if (d === 'This API key does not have access to this model.' || l.includes('does not have access')) return { code: 'no_model_access', retryable: false };
  if (d === 'This request is not permitted.' || l.includes('not permitted')) return { code: 'not_permitted', retryable: false };
  if (d === 'Insufficient credits.' || l.includes('insufficient credit')) return { code: 'insufficient_credits', retryable: false };
  if (d === 'Monthly usage limit reached.' || /monthly usage/.test(l)) return { code: 'monthly_usage_limit', retryable: false };
  if (/credit limit/.test(l)) return { code: 'monthly_credit_limit', retryable: false };
  if (/concurren|in-flight|in flight/.test(l)) return { code: 'concurrency_limit', retryable: true };
  if (/unsupported file format/.test(l)) return { code: 'unsupported_format', retryable: false };
  if (/too large|maximum upload size/.test(l)) return { code: 'file_too_large', retryable: false };
  if (d === 'The uploaded file is empty.' || /file is empty/.test(l)) return { code: 'empty_file', retryable: false };
  if (/could not be processed|corrupt/.test(l)) return { code: 'corrupt_audio', retryable: false };
  if (d === 'Invalid input audio' || /could not be decoded|does not match the declared format/.test(l)) return { code: 'invalid_audio', retryable: false };
  if (d === 'Invalid configuration.' || /invalid config/.test(l)) return { code: 'invalid_config', retryable: false };
  if (/^invalid (audio_format|sample_rate|num_channels)=|require(s)? (sample_rate|audio_format)/.test(l)) return { code: 'invalid_audio_params', retryable: false };
  if (d === 'Invalid request.') return { code: 'invalid_request', retryable: false };
  if (d === 'Unable to validate request. Please try again.' || /unable to validate/.test(l)) return { code: 'upstream_unavailable', retryable: true };
  if (/timed out/.test(l)) return { code: 'timeout', retryable: true };
  if (/service restarting|shutting down|going away/.test(l)) return { code: 'service_restart', retryable: true };
  if (/temporarily unavailable|try again later/.test(l)) return { code: 'service_unavailable', retryable: true };
  if (d === 'Internal server error' || /internal (server )?error/.test(l)) return { code: 'internal_error', retryable: false };
  return undefined;
}

function classifyStatus(status: number): Classified {
  switch (status) {
    case 400: return { code: 'invalid_request', retryable: false };
    case 401: return { code: 'invalid_api_key', retryable: false };
    case 403: return { code: 'usage_denied', retryable: false };
    case 404: return { code: 'not_found', retryable: false };
    case 413: return { code: 'file_too_large', retryable: false };
    case 422: return { code: 'validation_error', retryable: false };
    case 429: return { code: 'rate_limited', retryable: true };
    case 500: return { code: 'internal_error', retryable: false };
    case 502: return { code: 'upstream_unavailable', retryable: true };
    case 503: return { code: 'service_unavailable', retryable: true };
    case 504: return { code: 'timeout', retryable: true };
    default: return { code: 'http_error', retryable: status >= 500 };
  }
}

function ownRefusal(body: unknown): { code: ErrorCode; message: string } | undefined {
  const b = body as { code?: unknown; message?: unknown } | null;
  if (typeof b !== 'object' || b === null || typeof b.code !== 'string' || typeof b.message !== 'string') return undefined;
  return (ERROR_CODES as readonly string[]).includes(b.code) ? { code: b.code as ErrorCode, message: b.message.slice(0, 500) } : undefined;
}

/**
 * The single factory from an HTTP failure to an ApiError. `body` is the parsed JSON body
 * (or the raw text); `detail` decides the code where it is known, the status otherwise.
 */
export function errorFromHttp(status: number, body: unknown, context = 'request', secrets?: readonly (string | undefined)[]): ApiError {
  const validation = HTTPValidationErrorSchema.safeParse(body);
  if (validation.success) {
    const list = validation.data.detail;
    const first = list[0];
    const where = first ? ` at ${first.loc.join('.')}: ${first.msg}` : '';
    return new ApiError('validation_error', `${context} failed validation${where}`, {
      status,
      detail: list,
      body,
      validationErrors: list,
      retryable: false,
      secrets,
    });
  }
  const parsed = ErrorResponseSchema.safeParse(body);
  // This library's own servers (the relay) answer `{ code, message }` with a code of the table: kept as is.
  const own = ownRefusal(body);
  const detail = parsed.success ? parsed.data.detail : own ? own.message : typeof body === 'string' && body.length > 0 ? body.slice(0, 500) : undefined;
  const c = own ? { code: own.code, retryable: classifyStatus(status).retryable } : (detail !== undefined ? classifyDetail(detail) : undefined) ?? classifyStatus(status);
  const message = detail !== undefined ? `${context} failed with HTTP ${status}: ${detail}` : `${context} failed with HTTP ${status}`;
  return new ApiError(c.code, message, { status, detail, body, retryable: c.retryable, secrets });
}

/** What each close code means when no `error` event said more (§7.3, wire reference). */
export const CLOSE_CODES: Readonly<Record<number, Classified & { meaning: string }>> = {
  1000: { code: 'missing_done', retryable: false, meaning: 'normal close (an error only when it comes before done)' },
  1001: { code: 'service_restart', retryable: true, meaning: 'going away: the server is shutting down or restarting' },
  1002: { code: 'protocol_error', retryable: false, meaning: 'WebSocket protocol error (RFC 6455): a frame the server could not parse' },
  1003: { code: 'protocol_error', retryable: false, meaning: 'protocol error: audio before config, invalid config, or unsupported format, rate or channels' },
  1006: { code: 'connection_lost', retryable: true, meaning: 'connection dropped without a close frame' },
  1007: { code: 'protocol_error', retryable: false, meaning: 'invalid frame payload (RFC 6455): a text frame that is not UTF-8' },
  1009: { code: 'protocol_error', retryable: false, meaning: 'message too big (RFC 6455): a frame over the server\'s limit' },
  1011: { code: 'internal_error', retryable: true, meaning: 'internal error during streaming' },
  1012: { code: 'service_restart', retryable: true, meaning: 'service restart: the server is restarting, reconnect' },
  4001: { code: 'invalid_api_key', retryable: false, meaning: 'invalid API key' },
  4002: { code: 'invalid_audio', retryable: false, meaning: 'audio could not be decoded or does not match the declared format' },
  4003: { code: 'usage_denied', retryable: false, meaning: 'model access not enabled, authentication failed or usage denied' },
  4029: { code: 'limit_exceeded', retryable: false, meaning: 'monthly usage or concurrent connection limit exceeded' },
  4030: { code: 'concurrency_limit', retryable: true, meaning: 'concurrent connection limit exceeded at handshake' },
  4031: { code: 'limit_exceeded', retryable: false, meaning: 'usage limit exceeded (cause not shown by the contract)' },
};

/**
 * The single function from a WebSocket close (and the `error` event before it, if any) to a
 * SessionError. The error event's text decides where it is known; the close code otherwise.
 */
export function errorFromClose(closeCode: number, reason: string, errorEvent: string | undefined, audio?: AudioAccount, secrets?: readonly (string | undefined)[]): SessionError {
  const detail = errorEvent ?? (reason.length > 0 ? reason : undefined);
  const byCode = CLOSE_CODES[closeCode];
  const byDetail = detail !== undefined ? classifyDetail(detail) : undefined;
  // 4030 is concurrency by definition; a detail can only confirm it.
  const c = closeCode === 4030 ? byCode! : byDetail ?? byCode ?? { code: 'unexpected_close' as const, retryable: false };
  const meaning = byCode?.meaning ?? 'unexpected close code';
  const message = detail !== undefined ? `session closed with ${closeCode} (${meaning}): ${detail}` : `session closed with ${closeCode} (${meaning})`;
  return new SessionError(c.code, message, { closeCode, detail, retryable: c.retryable, secrets, ...(audio ? { audio } : {}) });
}

/** True for any error of this library; narrows to SvcError. */
export function isSvcError(err: unknown): err is SvcError {
  return err instanceof SvcError;
}
