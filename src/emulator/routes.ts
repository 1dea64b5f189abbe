// The seam between the emulator's front door and its endpoint modules: each module
// contributes HTTP routes keyed by "METHOD /path" (or a prefix) and shares one context.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { AccountBook } from './accounts.js';

/** What the emulator's servers accept from one peer (see docs/emulator.md, "Limits"). */
export interface EmulatorLimits {
  /**
   * A streaming session (awaiting config or streaming) that receives no frame for this long
   * is closed with 1003 after an `error` event; 0 turns the limit off. Default 60 000 ms.
   */
  readonly inactivityTimeoutMs: number;
  /** Largest WebSocket message before the session is admitted and configured. Default 1 MiB. */
  readonly maxMessageBytesBeforeConfig: number;
  /** Largest WebSocket message of a configured session. Default 64 MiB. */
  readonly maxMessageBytes: number;
  /** Most parts in one batch form. Default 32. */
  readonly maxFormParts: number;
  /** Bytes of every batch form part other than `upload_file`, together. Default 1 MiB. */
  readonly maxFormFieldBytes: number;
}

/** The limits the emulator applies when `startEmulator({ limits })` or the config file sets none (docs/emulator.md, "Limits"). */
export const DEFAULT_EMULATOR_LIMITS: EmulatorLimits = {
  inactivityTimeoutMs: 60_000,
  maxMessageBytesBeforeConfig: 1 << 20,
  maxMessageBytes: 64 * 1024 * 1024,
  maxFormParts: 32,
  maxFormFieldBytes: 1 << 20,
};

/** What every emulator route handler shares: the organizations (keys and limits), the log, and the orchestration credentials. */
export interface EmulatorContext {
  readonly accounts: AccountBook;
  /** Writes one emulator log line; never pass it an API key. */
  readonly log: (line: string) => void;
  /** The orchestration API's account identifier and key (§5.2). */
  readonly platform: { readonly accountUuid: string; readonly apiKey: string };
  /** Caps on what one peer may send; default {@link DEFAULT_EMULATOR_LIMITS}. */
  readonly limits?: EmulatorLimits | undefined;
}

/** Handles one HTTP request to the emulator; may be async. `url` is already parsed. */
export type HttpHandler = (req: IncomingMessage, res: ServerResponse, url: URL, ctx: EmulatorContext) => void | Promise<void>;

/** An HTTP route for {@link EmulatorOptions.routes}: a method, an exact path or a `/*` prefix, and its handler. */
export interface HttpRoute {
  readonly method: string;
  /** Exact path, or a prefix when it ends with `/*`. */
  readonly path: string;
  readonly handler: HttpHandler;
  /**
   * The handler authenticates before it reads the body and calls `acceptBody` itself, so a
   * client waiting on `Expect: 100-continue` sends no body to be refused. Otherwise the server
   * answers `100 Continue` before calling the handler.
   */
  readonly authenticatesFirst?: boolean | undefined;
}

/** Write a JSON response with `status` and the correct content headers; does nothing if headers were already sent. */
export function sendJson(res: ServerResponse, status: number, body: unknown): void {
  if (res.headersSent) return;
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

/** Tell a client waiting on `Expect: 100-continue` to send its body. */
export function acceptBody(req: IncomingMessage, res: ServerResponse): void {
  if (res.headersSent || !/100-continue/i.test(String(req.headers.expect ?? ''))) return;
  const r = res as ServerResponse & { [CONTINUED]?: boolean };
  if (r[CONTINUED]) return;
  r[CONTINUED] = true;
  res.writeContinue();
}
const CONTINUED = Symbol('continued');

/** Bytes read and discarded after an early answer before the connection is cut. */
export const LINGER_BYTES = 256 * 1024;
/** Longest wait for the client to stop sending after an early answer, ms. */
export const LINGER_MS = 1_000;

/**
 * Answer without reading the rest of the request body. When the body has been read to its end
 * this is `sendJson`; otherwise the response says `connection: close` and the connection is
 * closed after it, without draining the body. Node would drain it (reading everything a client
 * sends) or, with `connection: close`, reset a client still sending before it saw the answer;
 * instead the write side is ended and at most {@link LINGER_BYTES} more are read, for at most
 * {@link LINGER_MS}, before the socket is destroyed. Bytes read stay bounded either way.
 */
export function refuse(req: IncomingMessage, res: ServerResponse, status: number, body: unknown): void {
  if (req.complete) return sendJson(res, status, body);
  const socket = req.socket as Socket & { destroySoon?: () => void };
  // Node calls destroySoon on the socket of a `connection: close` response once it is written.
  socket.destroySoon = () => linger(socket);
  if (!res.headersSent) res.setHeader('connection', 'close');
  sendJson(res, status, body);
}

function linger(socket: Socket): void {
  if (socket.destroyed) return;
  socket.end();
  const start = socket.bytesRead;
  const until = Date.now() + LINGER_MS;
  // The HTTP parser consumes the socket's handle directly (no 'data' events): poll the count.
  const timer = setInterval(() => {
    if (socket.destroyed) return clearInterval(timer);
    if (socket.bytesRead - start > LINGER_BYTES || Date.now() >= until) {
      clearInterval(timer);
      socket.destroy();
    }
  }, 20);
  timer.unref();
  socket.once('close', () => clearInterval(timer));
}

export function matchRoute(routes: readonly HttpRoute[], method: string, pathname: string): HttpRoute | undefined {
  return routes.find(
    (r) => r.method === method && (r.path === pathname || (r.path.endsWith('/*') && pathname.startsWith(r.path.slice(0, -1)))),
  );
}
