// The one table of error codes: every stable code, and for each, once, whether trying again
// later can help (`retryable`) and whether a streaming session that failed with it reconnects
// and resumes (`resume`). Close codes map onto these codes; nothing else decides either fact.

/** What one error code means for whoever handles it: whether a retry can help, whether a session reconnects and resumes after it. */
export interface ErrorCodeRule {
  /** Whether trying the same request (or session) again later can help (§7.4). */
  readonly retryable: boolean;
  /**
   * Whether a streaming session that has opened once reconnects and resumes after it
   * (docs/resilience.md). Never true where `retryable` is false.
   */
  readonly resume: boolean;
}

const no = { retryable: false, resume: false } as const;
const later = { retryable: true, resume: false } as const;
const resume = { retryable: true, resume: true } as const;

/** Every stable error code. docs/errors.md lists each with its meaning, and {@link ERROR_TABLE} what it means for a retry and a reconnect. */
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
  'port_in_use',
  // Audio sources
  'ffmpeg_not_found',
  'ffmpeg_failed',
  'source_error',
  'aborted',
  // Telephony across worker processes (docs/telephony.md), and a service's shutdown (docs/operations.md)
  'worker_exited',
  'shutdown',
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

/**
 * Every stable error code with its {@link ErrorCodeRule}: the error's `retryable` and the
 * resilient session's decision to reconnect are both read from here. docs/errors.md lists each
 * code with the same two facts (checked by a test).
 */
export const ERROR_TABLE: Readonly<Record<ErrorCode, ErrorCodeRule>> = {
  // Authentication and access (§5)
  invalid_api_key: no,
  no_model_access: no,
  not_permitted: no,
  usage_denied: no,
  // Limits (§7.2, §7.4, §8)
  insufficient_credits: no,
  concurrency_limit: resume,
  monthly_usage_limit: no,
  monthly_credit_limit: no,
  limit_exceeded: no,
  rate_limited: later,
  // Input rejected by the service (§7.1)
  unsupported_format: no,
  empty_file: no,
  corrupt_audio: no,
  audio_too_short: no,
  invalid_request: no,
  validation_error: no,
  invalid_config: no,
  invalid_audio_params: no,
  invalid_audio: no,
  protocol_error: no,
  // Service-side failures
  internal_error: resume,
  service_unavailable: resume,
  upstream_unavailable: resume,
  timeout: resume,
  not_found: no,
  /** Any other HTTP status: retryable for a 5xx (the status decides, in errorFromHttp), else not. */
  http_error: no,
  // The HTTP client's own guards (docs/security.md)
  redirect_refused: no,
  response_too_large: no,
  response_timeout: later,
  // Streaming session lifecycle
  connection_failed: resume,
  connection_lost: resume,
  connect_timeout: resume,
  heartbeat_timeout: resume,
  service_restart: resume,
  done_timeout: later,
  missing_done: later,
  unexpected_close: no,
  handshake_rejected: no,
  malformed_frame: no,
  invalid_response: no,
  backpressure_overflow: no,
  // Local checks before anything is sent
  file_not_found: no,
  file_too_large: no,
  invalid_argument: no,
  port_in_use: no,
  // Audio sources
  ffmpeg_not_found: no,
  ffmpeg_failed: no,
  source_error: no,
  aborted: no,
  // A call whose worker process died: its next call, or an RTP leg's next packets, go to the restarted worker.
  worker_exited: later,
  // A call ended by its service's shutdown (the drain deadline passed, a second signal): another instance can take the next one.
  shutdown: later,
  // Orchestration jobs (§4.5)
  job_failed: no,
  job_unknown_state: no,
  poll_deadline: no,
  // Fleet coordination through Redis (docs/fleet.md)
  redis_unavailable: later,
  slot_timeout: later,
  lease_lost: later,
  // The relay between a Node session and browser pages (docs/browser.md)
  relay_unauthorized: no,
  relay_origin_refused: no,
  relay_busy: later,
  relay_gap: no,
  // An optional peer dependency a feature needs is not installed
  missing_dependency: no,
};

/** What one WebSocket close code means when no `error` event said more: the error code it is, and what that code's rule says. */
export interface CloseCodeRule extends ErrorCodeRule {
  readonly code: ErrorCode;
  readonly meaning: string;
}

function close(code: ErrorCode, meaning: string): CloseCodeRule {
  return { code, meaning, ...ERROR_TABLE[code] };
}

/** What each close code means when no `error` event said more (§7.3, wire reference); `retryable` and `resume` are its code's {@link ERROR_TABLE} row. */
export const CLOSE_CODES: Readonly<Record<number, CloseCodeRule>> = {
  1000: close('missing_done', 'normal close (an error only when it comes before done)'),
  1001: close('service_restart', 'going away: the server is shutting down or restarting'),
  1002: close('protocol_error', 'WebSocket protocol error (RFC 6455): a frame the server could not parse'),
  1003: close('protocol_error', 'protocol error: audio before config, invalid config, or unsupported format, rate or channels'),
  1006: close('connection_lost', 'connection dropped without a close frame'),
  1007: close('protocol_error', 'invalid frame payload (RFC 6455): a text frame that is not UTF-8'),
  1009: close('protocol_error', "message too big (RFC 6455): a frame over the server's limit"),
  1011: close('internal_error', 'internal error during streaming'),
  1012: close('service_restart', 'service restart: the server is restarting, reconnect'),
  4001: close('invalid_api_key', 'invalid API key'),
  4002: close('invalid_audio', 'audio could not be decoded or does not match the declared format'),
  4003: close('usage_denied', 'model access not enabled, authentication failed or usage denied'),
  4029: close('limit_exceeded', 'monthly usage or concurrent connection limit exceeded'),
  4030: close('concurrency_limit', 'concurrent connection limit exceeded at handshake'),
  4031: close('limit_exceeded', 'usage limit exceeded (cause not shown by the contract)'),
};
