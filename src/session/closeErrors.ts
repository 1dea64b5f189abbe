// What a streaming session's end means: a refused handshake or a close before `done`, turned
// into a typed error by pure functions of what the session saw (the one place to decide it).
import type { IncomingMessage } from 'node:http';
import { ContractError, ERROR_TABLE, errorFromClose, errorFromHttp, SessionError, type AudioAccount, type SvcError } from '../errors/index.js';
import { redact } from '../redact.js';

/** A handshake the server answered with an HTTP response instead of `101`: its status and body (JSON when it parses). */
export interface HandshakeRefusal {
  readonly status: number;
  readonly body: unknown;
}

/** Everything a close before `done` is judged by. */
export interface CloseFacts {
  /** The close code (1006 when the connection dropped). */
  readonly code: number;
  /** The close reason, as received (masked here). */
  readonly reason: string;
  /** The text of the server's `error` event, when one came. */
  readonly errorText: string | undefined;
  /** Whether the handshake completed. */
  readonly opened: boolean;
  /** Whether the audio had ended (the end-of-audio frame was due). */
  readonly audioEnded: boolean;
  /** The socket's last `error`, if any (ws reports server protocol violations as `WS_ERR_*`). */
  readonly socketError: Error | undefined;
  /** The refused handshake, when the server refused it. */
  readonly refusal: HandshakeRefusal | undefined;
  /** The audio account at this moment. */
  readonly audio: AudioAccount;
  /** The endpoint URL with its key masked, for messages. */
  readonly safeUrl: string;
  /** The key, masked in every text taken from the server or the socket. */
  readonly apiKey: string;
}

/** Read a refused handshake's body (the first 64 KiB); `done` gets it once it ended, `failed` when it could not be read. */
export function readRefusal(res: IncomingMessage, done: (refusal: HandshakeRefusal) => void, failed: () => void): void {
  const chunks: Buffer[] = [];
  let size = 0;
  res.on('data', (c: Buffer) => {
    size += c.length;
    if (size <= 65_536) chunks.push(c);
  });
  res.on('end', () => {
    const raw = Buffer.concat(chunks).toString('utf8');
    let body: unknown = raw;
    try {
      body = JSON.parse(raw);
    } catch {
      /* a non-JSON body is kept as text */
    }
    done({ status: res.statusCode ?? 0, body });
  });
  res.on('error', failed);
}

/** The error a refused handshake means: the HTTP error's code (`handshake_rejected` when it has none of its own). */
export function refusalError(refusal: HandshakeRefusal, audio: AudioAccount, apiKey: string): SessionError {
  const { status } = refusal;
  const http = errorFromHttp(status, refusal.body, 'the WebSocket handshake', [apiKey]);
  const code = http.code === 'http_error' ? 'handshake_rejected' : http.code;
  return new SessionError(code, http.message, { status, detail: http.detail, audio, secrets: [apiKey] });
}

/** The error a close before `done` means. */
export function closeError(f: CloseFacts): SvcError {
  const { code, socketError, errorText, audio } = f;
  if (f.refusal) return refusalError(f.refusal, audio, f.apiKey);
  if (!f.opened) {
    const why = socketError ? redact(socketError.message, [f.apiKey]) : `closed with ${code}`;
    return new SessionError('connection_failed', `could not connect to ${f.safeUrl}: ${why}`, { cause: socketError ? new Error(why) : undefined, audio });
  }
  // ws reports server protocol violations (oversized or invalid frames) as WS_ERR_* errors.
  const wsCode = (socketError as { code?: string } | undefined)?.code;
  if (socketError && errorText === undefined && wsCode?.startsWith('WS_ERR_')) {
    const what = wsCode === 'WS_ERR_UNSUPPORTED_MESSAGE_LENGTH' ? `a frame larger than maxServerFrameBytes` : 'an invalid frame';
    return new ContractError('malformed_frame', `the server sent ${what}: ${redact(socketError.message, [f.apiKey])}`, { closeCode: code, audio });
  }
  if (code === 1000 && errorText === undefined) {
    return new SessionError('missing_done', `the server closed normally before sending done${f.audioEnded ? '' : ' (audio was still being sent)'}`, { closeCode: code, audio });
  }
  return errorFromClose(code, f.reason, errorText, audio, [f.apiKey]);
}

/** The connection was lost mid-send and no close came within `limitMs`: judged as a 1006 close. */
export function lostWithoutCloseError(limitMs: number, errorText: string | undefined, audio: AudioAccount): SessionError {
  const c = errorFromClose(1006, '', errorText, audio);
  return new SessionError(c.code, `the connection was lost and did not close within ${limitMs} ms`, { closeCode: 1006, audio });
}

/** The server sent an `error` event and did not close within `limitMs`: judged as a 1011 close. */
export function errorWithoutCloseError(limitMs: number, errorText: string, audio: AudioAccount): SessionError {
  const c = errorFromClose(1011, '', errorText, audio);
  return new SessionError(c.code, `the server reported an error and did not close within ${limitMs} ms: ${errorText}`, { detail: errorText, audio });
}

/**
 * Whether a new session can cure this failure, as the table says (`ERROR_TABLE[code].resume`):
 * a lost, failed or silent connection, an internal error, a going-away close, a concurrency
 * refusal or a passing unavailability at the handshake. Only a session's own errors qualify.
 */
export function resumable(err: unknown): boolean {
  return err instanceof SessionError && ERROR_TABLE[err.code].resume;
}
