// The one error hierarchy: SvcError with a stable `code`, the HTTP status or close code where
// there is one, the server's `detail`, and `retryable` as the code's row of the table says;
// one subclass per origin (HTTP, session, local input, contract breach, relay, audio source).
import type { ValidationError } from './errorBody.js';
import { redact, redactDeep } from '../redact.js';
import { ERROR_TABLE, type ErrorCode } from './codes.js';
import { maskedCause, secretsOf } from './masking.js';

/** Audio accounting attached to a session failure: every byte read is sent or reported unsent. */
export interface AudioAccount {
  /** Bytes received from the audio source. */
  readonly read: number;
  /** Bytes flushed to a socket at least once (a byte sent again after a reconnect counts once). */
  readonly sent: number;
  /** Bytes read and never flushed to any socket: `read - sent`. */
  readonly unsent: number;
}

/** What an {@link SvcError} carries besides its code and message: HTTP status or close code, the server's `detail`, the cause and the audio account. */
export interface SvcErrorOptions {
  readonly status?: number | undefined;
  readonly closeCode?: number | undefined;
  readonly detail?: unknown | undefined;
  /**
   * Whether trying again can help. Default: the code's row of `ERROR_TABLE`, which is what
   * every error of a streaming session carries; given only where the row says the status
   * decides (`http_error`: a 5xx is retryable).
   */
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
  /** Whether trying the same request again can help (§7.4): the code's row of `ERROR_TABLE`. */
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
    this.retryable = options.retryable ?? ERROR_TABLE[code]?.retryable ?? false;
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

/** The options of a session's errors: everything but `retryable`, which is always the code's row of `ERROR_TABLE`. */
export type SessionErrorOptions = Omit<SvcErrorOptions, 'retryable'>;

/**
 * A streaming session that ended in anything but `done` followed by a normal close, except a
 * frame the contract does not allow, which is a {@link ContractError} (`malformed_frame`).
 * Its `retryable` is its code's row of `ERROR_TABLE`, as is the decision to reconnect.
 */
export class SessionError extends SvcError {
  override readonly name: string = 'SessionError';
  constructor(code: ErrorCode, message: string, options: SessionErrorOptions = {}) {
    super(code, message, { ...options, retryable: undefined });
  }
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

/** True for any error of this library; narrows to SvcError. */
export function isSvcError(err: unknown): err is SvcError {
  return err instanceof SvcError;
}
