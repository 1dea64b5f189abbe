// The relay's door: which requests are its own (`/sessions`, `/sessions/ID/events`), the
// Origin allow-list and CORS headers, preflights, the method, the session id in the path (its
// alphabet, 400 otherwise) and the token, each refusal a JSON body with a code. What passes goes to the routes in server.ts.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { isSessionId } from '../schema/sessionId.js';
import { originDecision, requestToken, tokenAllowed, type RelayTokenCheck } from './access.js';

const EVENTS_PATH = /^\/sessions\/([^/]+)\/events$/;

/** Counters of what the door refused. */
export interface GateCounters {
  refusedOrigin: number;
  refusedToken: number;
}

/** A request the door let in. */
export interface Admitted {
  /** The session of `/sessions/ID/events`; undefined for the list. */
  readonly sessionId: string | undefined;
  /** The CORS headers every answer to it carries. */
  readonly cors: Record<string, string>;
  /** Where the page resumes: `Last-Event-ID`, or the `lastEventId` query parameter. */
  readonly lastEventId: string | undefined;
  readonly head: boolean;
}

/** A JSON answer, never cached. */
export function sendJson(res: ServerResponse, status: number, value: unknown, headers: Record<string, string> = {}, head = false): void {
  const body = JSON.stringify(value);
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(body), 'cache-control': 'no-store', ...headers });
  res.end(head ? undefined : body);
}

/** A refusal: `{ code, message }` with `status`. */
export function refuse(res: ServerResponse, status: number, code: string, message: string, headers: Record<string, string> = {}): void {
  sendJson(res, status, { code, message }, headers);
}

function corsHeaders(origin: string | undefined): Record<string, string> {
  return origin === undefined ? {} : { 'access-control-allow-origin': origin, 'access-control-allow-credentials': 'true', vary: 'Origin' };
}

/**
 * Passes `req` through the door: undefined when the path is not the relay's (the caller may
 * serve it), `'answered'` when the door answered it (a refusal, a preflight), or what it let in.
 */
export function gate(req: IncomingMessage, res: ServerResponse, origins: ReadonlySet<string>, token: RelayTokenCheck, counters: GateCounters): Admitted | 'answered' | undefined {
  const url = new URL(req.url ?? '/', 'http://relay.invalid');
  const path = url.pathname;
  const events = EVENTS_PATH.exec(path);
  if (path !== '/sessions' && !events) return undefined;
  const origin = originDecision(req.headers, origins);
  if (origin.kind === 'refused') {
    counters.refusedOrigin++;
    refuse(res, 403, 'relay_origin_refused', 'this origin may not read the relay');
    return 'answered';
  }
  const cors = corsHeaders(origin.kind === 'allowed' ? origin.origin : undefined);
  if (req.method === 'OPTIONS') {
    res.writeHead(204, {
      ...cors,
      'access-control-allow-methods': 'GET, OPTIONS',
      'access-control-allow-headers': 'authorization, last-event-id, cache-control',
      'access-control-max-age': '600',
    });
    res.end();
    return 'answered';
  }
  if (req.method !== 'GET' && req.method !== 'HEAD') {
    refuse(res, 405, 'invalid_request', 'GET only', { ...cors, allow: 'GET, OPTIONS' });
    return 'answered';
  }
  let sessionId: string | undefined;
  try {
    sessionId = events ? decodeURIComponent(events[1]!) : undefined;
  } catch {
    sessionId = '\0';
  }
  // The id's alphabet is checked here, before the token and before anything reads Redis.
  if (sessionId !== undefined && !isSessionId(sessionId)) {
    refuse(res, 400, 'invalid_argument', 'a session id is 1 to 128 characters of A-Z a-z 0-9 . _ ~ : -', cors);
    return 'answered';
  }
  if (!tokenAllowed(token, requestToken(req.headers, url.searchParams), sessionId)) {
    counters.refusedToken++;
    refuse(res, 401, 'relay_unauthorized', 'a valid relay token is required', { ...cors, 'www-authenticate': 'Bearer' });
    return 'answered';
  }
  const header = req.headers['last-event-id'];
  const lastEventId = (Array.isArray(header) ? header[0] : header) ?? url.searchParams.get('lastEventId') ?? undefined;
  return { sessionId, cors, lastEventId, head: req.method === 'HEAD' };
}
