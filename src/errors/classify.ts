// From what a server said to one typed error: the `detail` text first (statuses are shared
// between causes), then the HTTP status or the close code. `retryable` is never decided here:
// it is the code's row of the table (codes.ts), except a 5xx the table has no code for.
import { ErrorResponseSchema, HTTPValidationErrorSchema } from './errorBody.js';
import { ApiError, SessionError, type AudioAccount } from './classes.js';
import { CLOSE_CODES, ERROR_CODES, type ErrorCode } from './codes.js';

/**
 * Classify a `detail` string (§7.1, §7.2): the detail decides, because statuses are shared
 * between causes and some endpoints answer 403 or 429 for everything. Undefined for a text
 * no rule knows.
 */
export function classifyDetail(detail: string): ErrorCode | undefined {
  const d = detail.trim();
  const l = d.toLowerCase();
  if (d === 'Invalid API key.' || /invalid api key|api key (is )?(invalid|missing|not recognized)/.test(l)) return 'invalid_api_key';
  if (d === 'This API key does not have access to this model.' || l.includes('does not have access')) return 'no_model_access';
  if (d === 'This request is not permitted.' || l.includes('not permitted')) return 'not_permitted';
  if (d === 'Insufficient credits.' || l.includes('insufficient credit')) return 'insufficient_credits';
  if (d === 'Monthly usage limit reached.' || /monthly usage/.test(l)) return 'monthly_usage_limit';
  if (/credit limit/.test(l)) return 'monthly_credit_limit';
  if (/concurren|in-flight|in flight/.test(l)) return 'concurrency_limit';
  if (/unsupported file format/.test(l)) return 'unsupported_format';
  if (/too large|maximum upload size/.test(l)) return 'file_too_large';
  if (d === 'The uploaded file is empty.' || /file is empty/.test(l)) return 'empty_file';
  if (/could not be processed|corrupt/.test(l)) return 'corrupt_audio';
  if (d === 'Invalid input audio' || /could not be decoded|does not match the declared format/.test(l)) return 'invalid_audio';
  if (d === 'Invalid configuration.' || /invalid config/.test(l)) return 'invalid_config';
  if (/^invalid (audio_format|sample_rate|num_channels)=|require(s)? (sample_rate|audio_format)/.test(l)) return 'invalid_audio_params';
  if (d === 'Invalid request.') return 'invalid_request';
  if (d === 'Unable to validate request. Please try again.' || /unable to validate/.test(l)) return 'upstream_unavailable';
  if (/timed out/.test(l)) return 'timeout';
  if (/service restarting|shutting down|going away/.test(l)) return 'service_restart';
  if (/temporarily unavailable|try again later/.test(l)) return 'service_unavailable';
  if (d === 'Internal server error' || /internal (server )?error/.test(l)) return 'internal_error';
  return undefined;
}

function classifyStatus(status: number): ErrorCode {
  switch (status) {
    case 400: return 'invalid_request';
    case 401: return 'invalid_api_key';
    case 403: return 'usage_denied';
    case 404: return 'not_found';
    case 413: return 'file_too_large';
    case 422: return 'validation_error';
    case 429: return 'rate_limited';
    case 500: return 'internal_error';
    case 502: return 'upstream_unavailable';
    case 503: return 'service_unavailable';
    case 504: return 'timeout';
    default: return 'http_error';
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
    return new ApiError('validation_error', `${context} failed validation${where}`, { status, detail: list, body, validationErrors: list, secrets });
  }
  const parsed = ErrorResponseSchema.safeParse(body);
  // This library's own servers (the relay) answer `{ code, message }` with a code of the table: kept as is.
  const own = ownRefusal(body);
  const detail = parsed.success ? parsed.data.detail : own ? own.message : typeof body === 'string' && body.length > 0 ? body.slice(0, 500) : undefined;
  const code = own?.code ?? (detail !== undefined ? classifyDetail(detail) : undefined) ?? classifyStatus(status);
  const message = detail !== undefined ? `${context} failed with HTTP ${status}: ${detail}` : `${context} failed with HTTP ${status}`;
  // The table's one exception: a status it has no code for is retryable when the server failed.
  return new ApiError(code, message, { status, detail, body, secrets, ...(code === 'http_error' ? { retryable: status >= 500 } : {}) });
}

/**
 * The single function from a WebSocket close (and the `error` event before it, if any) to a
 * SessionError. The error event's text decides where it is known; the close code otherwise.
 */
export function errorFromClose(closeCode: number, reason: string, errorEvent: string | undefined, audio?: AudioAccount, secrets?: readonly (string | undefined)[]): SessionError {
  const detail = errorEvent ?? (reason.length > 0 ? reason : undefined);
  const byCode = CLOSE_CODES[closeCode];
  const byDetail = detail !== undefined ? classifyDetail(detail) : undefined;
  // 4030 is concurrency by definition; a detail can only confirm it.
  const code: ErrorCode = closeCode === 4030 ? byCode!.code : byDetail ?? byCode?.code ?? 'unexpected_close';
  const meaning = byCode?.meaning ?? 'unexpected close code';
  const message = detail !== undefined ? `session closed with ${closeCode} (${meaning}): ${detail}` : `session closed with ${closeCode} (${meaning})`;
  return new SessionError(code, message, { closeCode, detail, secrets, ...(audio ? { audio } : {}) });
}
