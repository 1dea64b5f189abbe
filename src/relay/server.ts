// The relay: live sessions' raw events served to browsers over server-sent events, with
// resumable delivery from a bounded history, an Origin allow-list, a token check, and a
// bound on every input and on what each page may hold. The API key stays in this process.
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { asyncScheduler, interval, timer, type SchedulerLike, type Subscription } from 'rxjs';
import { InputError, RelayError, type SvcError } from '../errors.js';
import { positiveOption } from '../internal/positiveOption.js';
import { originDecision, requestToken, tokenAllowed, type RelayTokenCheck } from './access.js';
import type { FleetSource } from './fleetSource.js';
import type { RelaySessionInfo } from './protocol.js';
import { checkSessionId } from '../schema/sessionId.js';
import { createSessionHub, type RelaySession, type RelaySessionLimits, type SessionHub } from './relaySession.js';

/** Options of {@link createRelay}. Every bound has a default; the token check does not. */
export interface RelayOptions {
  /**
   * Who may read: a token, a list, a function `(token, sessionId) => boolean`, or `null` for
   * no token (only behind another guard). Pages send it as `Authorization: Bearer T`, a
   * `token` query parameter (EventSource cannot set headers) or the `svc_relay_token` cookie.
   */
  readonly token: RelayTokenCheck;
  /**
   * Origins allowed to read from a browser (`https://app.example.com`, exact scheme, host and
   * port). A request with any other `Origin` is refused (403, no CORS headers). Requests
   * without `Origin` (servers, curl, same-origin GETs) and the relay's own origin pass. Default none.
   */
  readonly origins?: readonly string[] | undefined;
  /** Events kept per session for pages that join late or resume. Default 10 000. */
  readonly historyEvents?: number | undefined;
  /** Bytes of event messages kept per session. Default 16 MiB. */
  readonly historyBytes?: number | undefined;
  /** Bytes a page's socket may hold before the relay stops writing to it until it drains. Default 256 KiB. */
  readonly maxClientBufferBytes?: number | undefined;
  /** A page whose socket stays full this long is dropped (it may resume). Default 30 000 ms. */
  readonly stallTimeoutMs?: number | undefined;
  /** Event streams open at once, over all sessions; more get 503 `relay_busy`. Default 256. */
  readonly maxStreams?: number | undefined;
  /** Sessions held at once (live and ended); `addSession` past it throws `relay_busy`. Default 1000. */
  readonly maxSessions?: number | undefined;
  /** TCP connections `listen()` accepts at once. Default 1024. */
  readonly maxConnections?: number | undefined;
  /** A comment line on idle streams this often, so proxies keep them open. Default 15 000 ms. */
  readonly heartbeatMs?: number | undefined;
  /** How long an ended session stays listed and joinable. Default 600 000 ms (10 minutes). */
  readonly keepEndedMs?: number | undefined;
  /** The reconnection delay a page is told (`retry:`). Default 1000 ms. */
  readonly retryMs?: number | undefined;
  /** Time allowed to receive a request's headers. Default 10 000 ms. */
  readonly headersTimeoutMs?: number | undefined;
  /** Largest request head accepted (431 past it). Default 8 KiB. */
  readonly maxHeaderBytes?: number | undefined;
  /** Scheduler of the heartbeat, the stall and keep-ended timers (tests use virtual time). */
  readonly scheduler?: SchedulerLike | undefined;
  /**
   * Serve every session published to this Redis (`redis://…`, see `publishSession` and
   * docs/fleet.md) instead of sessions added here: the same interface, with SSE ids
   * (`EPOCH:MS-SEQ`) that every relay of the fleet resumes from. One reader per relay process
   * (two connections), whatever the number of pages. ioredis loads only with this option.
   */
  readonly from?: string | undefined;
  /** The publishers' key prefix, with `from`. Default `svc-stream`. */
  readonly prefix?: string | undefined;
  /** With `from`: called once each time Redis becomes unreachable (the relay reconnects on its own; pages meanwhile get 503 and retry). */
  readonly onRedisError?: ((error: SvcError) => void) | undefined;
}

/** Options of {@link Relay.addSession}. */
export interface RelaySessionOptions {
  /** The id pages join it by: 1 to 128 of `A-Z a-z 0-9 . _ ~ -`. Default a random UUID. */
  readonly id?: string | undefined;
  /** Shown by pages (a file name, a call id). Default the id. */
  readonly title?: string | undefined;
}

/** What the relay refused and dropped, counted (nothing is dropped silently). */
export interface RelayStats {
  /** Requests refused for their Origin (403). */
  refusedOrigin: number;
  /** Requests refused for a missing or wrong token (401). */
  refusedToken: number;
  /** Streams refused because `maxStreams` were open (503). */
  refusedBusy: number;
  /** Event streams open now. */
  streams: number;
}

/** A relay made by {@link createRelay}. */
export interface Relay {
  /** Add a session pages can join by id (throws `invalid_argument` for a bad or taken id, or on a relay `from` Redis; `relay_busy` past `maxSessions`). */
  addSession(options?: RelaySessionOptions): RelaySession;
  /** A session by id (live, or ended less than `keepEndedMs` ago). */
  session(id: string): RelaySession | undefined;
  /** Every session held, oldest first. */
  sessions(): RelaySessionInfo[];
  /**
   * Serve a request if it is the relay's (`OPTIONS` preflights, `GET /sessions`,
   * `GET /sessions/ID/events`) and return true; return false for any other path, so the
   * relay can share a server with your own routes.
   */
  handle(req: IncomingMessage, res: ServerResponse): boolean;
  /** Listen on its own HTTP server (default 127.0.0.1, a free port). Once. */
  listen(options?: { readonly port?: number; readonly host?: string }): Promise<{ readonly url: string; readonly port: number }>;
  readonly stats: Readonly<RelayStats>;
  /** Close every session (`closed`) and stream, and the server if `listen` started one. */
  close(): Promise<void>;
}

const DEFAULTS = {
  historyEvents: 10_000,
  historyBytes: 16 << 20,
  maxClientBufferBytes: 256 << 10,
  stallTimeoutMs: 30_000,
  maxStreams: 256,
  maxSessions: 1000,
  maxConnections: 1024,
  heartbeatMs: 15_000,
  keepEndedMs: 600_000,
  retryMs: 1000,
  headersTimeoutMs: 10_000,
  maxHeaderBytes: 8 << 10,
} as const;

const EVENTS_PATH = /^\/sessions\/([^/]+)\/events$/;

/**
 * A relay of live sessions' events to browser pages, over server-sent events.
 *
 * - `addSession()` makes a session; `feed(events$)` subscribes to its events (hot from then
 *   on: numbered 1, 2, 3 … and kept in a bounded history, whoever is connected).
 * - `GET /sessions` lists them; `GET /sessions/ID/events` streams one: the history from
 *   `Last-Event-ID` (header, or `lastEventId` query), then each event as it comes, the
 *   status on change, and `end` when it ended. A page that asks for more than the history
 *   holds gets a `gap` message first.
 * - Every request passes the Origin allow-list and the token check first (preflights only the
 *   Origin). Bytes sent grow with the events: each event is framed once and written as is.
 * - Throws `invalid_argument` for a bad option.
 */
export function createRelay(options: RelayOptions): Relay {
  return relayOn(options, undefined);
}

/** A relay whose fleet side is `fleet`, opened by the caller (the fleet dashboard shares its reader). Internal. */
export function relayOn(options: RelayOptions, fleetSource: Promise<FleetSource> | undefined): Relay {
  if (options.token === undefined) throw new InputError('invalid_argument', 'relay option token is required: a token, a list, a function, or null for none', { path: 'token' });
  const scheduler = options.scheduler ?? asyncScheduler;
  const limits: RelaySessionLimits = {
    historyEvents: positiveOption('relay', 'historyEvents', options.historyEvents, DEFAULTS.historyEvents),
    historyBytes: positiveOption('relay', 'historyBytes', options.historyBytes, DEFAULTS.historyBytes),
    maxClientBufferBytes: positiveOption('relay', 'maxClientBufferBytes', options.maxClientBufferBytes, DEFAULTS.maxClientBufferBytes),
    stallTimeoutMs: positiveOption('relay', 'stallTimeoutMs', options.stallTimeoutMs, DEFAULTS.stallTimeoutMs),
    scheduler,
  };
  const maxStreams = positiveOption('relay', 'maxStreams', options.maxStreams, DEFAULTS.maxStreams);
  const maxSessions = positiveOption('relay', 'maxSessions', options.maxSessions, DEFAULTS.maxSessions);
  const keepEndedMs = positiveOption('relay', 'keepEndedMs', options.keepEndedMs, DEFAULTS.keepEndedMs);
  const retryMs = positiveOption('relay', 'retryMs', options.retryMs, DEFAULTS.retryMs);
  const heartbeatMs = positiveOption('relay', 'heartbeatMs', options.heartbeatMs, DEFAULTS.heartbeatMs);
  const origins = new Set<string>();
  for (const o of options.origins ?? []) {
    let origin: string | undefined;
    try {
      origin = new URL(o).origin;
    } catch {
      origin = undefined;
    }
    if (origin === undefined || origin === 'null' || origin !== o.replace(/\/$/, '').toLowerCase()) {
      throw new InputError('invalid_argument', `relay origin ${JSON.stringify(o)} is not an origin (scheme://host[:port], nothing after)`, { path: 'origins' });
    }
    origins.add(origin);
  }

  const hubs = new Map<string, SessionHub>();
  const stats: RelayStats = { refusedOrigin: 0, refusedToken: 0, refusedBusy: 0, streams: 0 };
  const responses = new Set<ServerResponse>();
  const timers = new Set<Subscription>();
  let server: Server | undefined;
  let closed = false;
  // With `from`, the fleet's reader: loaded and connected in the background (listen waits for it).
  let fleet: FleetSource | undefined;
  const fleetReady: Promise<FleetSource> | undefined =
    fleetSource?.then((f) => (fleet = f)) ??
    (options.from === undefined
      ? undefined
      : import('./fleetSource.js').then(async ({ openFleetSource }) =>
          (fleet = await openFleetSource({
            from: options.from!,
            prefix: options.prefix,
            maxClientBufferBytes: limits.maxClientBufferBytes,
            stallTimeoutMs: limits.stallTimeoutMs,
            keepEndedMs,
            scheduler,
            onRedisError: options.onRedisError,
          })),
        ));
  fleetReady?.catch(() => undefined);

  const heartbeat = interval(heartbeatMs, scheduler).subscribe(() => {
    for (const hub of hubs.values()) hub.heartbeat();
    fleet?.heartbeat();
  });

  const onEnd = (hub: SessionHub): void => {
    const t = timer(keepEndedMs, scheduler).subscribe(() => {
      timers.delete(t);
      if (hubs.get(hub.id) === hub) hubs.delete(hub.id);
    });
    timers.add(t);
  };

  const addSession = (o: RelaySessionOptions = {}): RelaySession => {
    if (closed) throw new RelayError('relay_busy', 'the relay is closed');
    if (fleetReady !== undefined) throw new InputError('invalid_argument', 'a relay from Redis serves what is published there: publish sessions with publishSession instead', { path: 'from' });
    const id = o.id ?? randomUUID();
    checkSessionId(id);
    if (hubs.has(id)) throw new InputError('invalid_argument', `relay session id ${id} is taken`, { path: 'id' });
    if (hubs.size >= maxSessions) throw new RelayError('relay_busy', `the relay holds ${maxSessions} sessions (maxSessions)`, { retryable: true });
    const hub = createSessionHub(id, o.title ?? id, limits, onEnd);
    hubs.set(id, hub);
    return hub;
  };

  const corsHeaders = (origin: string | undefined): Record<string, string> =>
    origin === undefined ? {} : { 'access-control-allow-origin': origin, 'access-control-allow-credentials': 'true', vary: 'Origin' };

  const refuse = (res: ServerResponse, status: number, code: string, message: string, headers: Record<string, string> = {}): void => {
    const body = JSON.stringify({ code, message });
    res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(body), 'cache-control': 'no-store', ...headers });
    res.end(body);
  };

  const handle = (req: IncomingMessage, res: ServerResponse): boolean => {
    const url = new URL(req.url ?? '/', 'http://relay.invalid');
    const path = url.pathname;
    const events = EVENTS_PATH.exec(path);
    if (path !== '/sessions' && !events) return false;
    const origin = originDecision(req.headers, origins);
    if (origin.kind === 'refused') {
      stats.refusedOrigin++;
      refuse(res, 403, 'relay_origin_refused', 'this origin may not read the relay');
      return true;
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
      return true;
    }
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      refuse(res, 405, 'invalid_request', 'GET only', { ...cors, allow: 'GET, OPTIONS' });
      return true;
    }
    let sessionId: string | undefined;
    try {
      sessionId = events ? decodeURIComponent(events[1]!) : undefined;
    } catch {
      refuse(res, 400, 'invalid_argument', 'bad session id', cors);
      return true;
    }
    if (!tokenAllowed(options.token, requestToken(req.headers, url.searchParams), sessionId)) {
      stats.refusedToken++;
      refuse(res, 401, 'relay_unauthorized', 'a valid relay token is required', { ...cors, 'www-authenticate': 'Bearer' });
      return true;
    }
    if (sessionId === undefined) {
      const list = (sessions: RelaySessionInfo[]): void => {
        const body = JSON.stringify({ sessions });
        res.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(body), 'cache-control': 'no-store', ...cors });
        res.end(req.method === 'HEAD' ? undefined : body);
      };
      if (fleetReady) {
        fleetReady.then(
          (f) => list(f.sessions()),
          (err: unknown) => refuse(res, 503, 'redis_unavailable', `the relay cannot read Redis: ${(err as Error).message}`, cors),
        );
      } else list([...hubs.values()].map((h) => h.info()));
      return true;
    }
    const header = req.headers['last-event-id'];
    const lastRaw = (Array.isArray(header) ? header[0] : header) ?? url.searchParams.get('lastEventId') ?? undefined;
    const openStream = (): void => {
      stats.streams++;
      responses.add(res);
      res.on('close', () => {
        stats.streams--;
        responses.delete(res);
      });
      res.socket?.setNoDelay(true);
      res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-store', 'x-accel-buffering': 'no', ...cors });
      if (req.method !== 'HEAD') res.write(`retry: ${retryMs}\n\n`);
    };
    const busy = (): boolean => {
      if (stats.streams < maxStreams) return false;
      stats.refusedBusy++;
      refuse(res, 503, 'relay_busy', 'too many streams', { ...cors, 'retry-after': String(Math.ceil(retryMs / 1000)) });
      return true;
    };
    if (fleetReady) {
      if (busy()) return true;
      const id = sessionId;
      fleetReady
        .then((f) => (req.method === 'HEAD' ? f.join(id, undefined, res, () => (openStream(), res.end())) : f.join(id, lastRaw, res, openStream)))
        .then(
          (r) => {
            if (r.kind === 'not_found') refuse(res, 404, 'not_found', 'no such session', cors);
            else if (r.kind === 'bad_cursor') refuse(res, 400, 'invalid_argument', `Last-Event-ID ${String(lastRaw).slice(0, 40)} is not a position of this relay's streams`, cors);
            else if (r.kind === 'unavailable') refuse(res, 503, 'redis_unavailable', 'the relay cannot read Redis now', { ...cors, 'retry-after': String(Math.ceil(retryMs / 1000)) });
          },
          () => (res.headersSent ? res.destroy() : refuse(res, 503, 'redis_unavailable', 'the relay cannot read Redis', cors)),
        );
      return true;
    }
    const hub = hubs.get(sessionId);
    if (!hub) {
      refuse(res, 404, 'not_found', 'no such session', cors);
      return true;
    }
    const last = lastRaw ?? '0';
    const after = /^\d{1,15}$/.test(last) ? Number(last) : NaN;
    if (!Number.isSafeInteger(after) || after > hub.lastId) {
      refuse(res, 400, 'invalid_argument', `Last-Event-ID ${last.slice(0, 20)} is not an event of this session`, cors);
      return true;
    }
    if (busy()) return true;
    openStream();
    if (req.method === 'HEAD') {
      res.end();
      return true;
    }
    hub.join(res, after);
    return true;
  };

  const listen = async (o: { readonly port?: number; readonly host?: string } = {}): Promise<{ url: string; port: number }> => {
    if (server) throw new InputError('invalid_argument', 'the relay is already listening');
    // Without ioredis, or with a bad prefix, a relay from Redis fails here, before it listens.
    await fleetReady;
    const s = createServer({ maxHeaderSize: positiveOption('relay', 'maxHeaderBytes', options.maxHeaderBytes, DEFAULTS.maxHeaderBytes), headersTimeout: positiveOption('relay', 'headersTimeoutMs', options.headersTimeoutMs, DEFAULTS.headersTimeoutMs), requestTimeout: 0 }, (req, res) => {
      if (!handle(req, res)) refuse(res, 404, 'not_found', 'not found');
    });
    s.maxConnections = positiveOption('relay', 'maxConnections', options.maxConnections, DEFAULTS.maxConnections);
    server = s;
    await new Promise<void>((resolve, reject) => {
      s.once('error', reject);
      s.listen(o.port ?? 0, o.host ?? '127.0.0.1', () => {
        s.off('error', reject);
        resolve();
      });
    });
    const address = s.address() as AddressInfo;
    const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
    return { url: `http://${host}:${address.port}`, port: address.port };
  };

  let closing: Promise<void> | undefined;
  const close = (): Promise<void> =>
    (closing ??= (async () => {
      closed = true;
      heartbeat.unsubscribe();
      for (const hub of hubs.values()) hub.close();
      for (const t of timers) t.unsubscribe();
      timers.clear();
      // Pages were sent `end`; give their sockets a moment (wall-clock: sockets flush in real
      // time whatever the relay's scheduler) to flush it, then cut what is left.
      await Promise.race([Promise.all([...hubs.values()].map((h) => h.ended)), new Promise((r) => setTimeout(r, 500).unref())]);
      await fleetReady?.then((f) => f.close(), () => undefined);
      for (const res of responses) res.destroy();
      hubs.clear();
      if (server) {
        const s = server;
        s.closeAllConnections();
        await new Promise<void>((resolve) => s.close(() => resolve()));
      }
    })());

  return {
    addSession,
    session: (id) => hubs.get(id),
    sessions: () => fleet?.sessions() ?? [...hubs.values()].map((h) => h.info()),
    handle,
    listen,
    stats,
    close,
  };
}
