// The relay: live sessions' raw events served to browsers over server-sent events, with
// resumable delivery from a bounded history, an Origin allow-list, a token check, and a
// bound on every input and on what each page may hold. The API key stays in this process.
// This file holds the sessions and their routes; options are read in relaySettings.ts, the
// door (paths, Origin, token, refusals) is requestGate.ts.
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { interval, timer, type Subscription } from 'rxjs';
import { InputError, RelayError } from '../errors/index.js';
import { checkSessionId } from '../schema/sessionId.js';
import type { FleetSource } from './fleetSource.js';
import type { RelaySessionInfo } from './protocol.js';
import { createSessionHub, type RelaySession, type SessionHub } from './relaySession.js';
import { relaySettings, type RelayOptions } from './relaySettings.js';
import { gate, refuse, sendJson } from './requestGate.js';

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
  /**
   * Listen on its own HTTP server (default 127.0.0.1, a free port). Once. `onRequest` is tried
   * first and answers what it returns true for (the operator's `/healthz`, `/readyz`, `/metrics`).
   */
  listen(options?: { readonly port?: number; readonly host?: string; readonly onRequest?: ((req: IncomingMessage, res: ServerResponse) => boolean) | undefined }): Promise<{ readonly url: string; readonly port: number }>;
  readonly stats: Readonly<RelayStats>;
  /**
   * A relay `from` Redis: whether its Redis answers now (both of its connections are up); while
   * it does not, pages that join get 503 `redis_unavailable`. Undefined for a relay of its own
   * sessions, or before its reader is open. For readiness checks.
   */
  readonly redisConnected: boolean | undefined;
  /** Close every session (`closed`) and stream, and the server if `listen` started one. */
  close(): Promise<void>;
}


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
  const settings = relaySettings(options);
  const { limits, scheduler, maxStreams, maxSessions, keepEndedMs, retryMs, heartbeatMs } = settings;

  const hubs = new Map<string, SessionHub>();
  const stats: RelayStats = { refusedOrigin: 0, refusedToken: 0, refusedBusy: 0, streams: 0 };
  const responses = new Set<ServerResponse>();
  const timers = new Set<Subscription>();
  /** Fleet joins reading Redis now: each holds a stream slot until it is answered. */
  let joining = 0;
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

  const handle = (req: IncomingMessage, res: ServerResponse): boolean => {
    const admitted = gate(req, res, settings.origins, options.token, stats);
    if (admitted === undefined) return false;
    if (admitted === 'answered') return true;
    const { sessionId, cors, lastEventId: lastRaw } = admitted;
    if (sessionId === undefined) {
      if (fleetReady) {
        fleetReady.then(
          (f) => sendJson(res, 200, { sessions: f.sessions() }, cors, admitted.head),
          (err: unknown) => refuse(res, 503, 'redis_unavailable', `the relay cannot read Redis: ${(err as Error).message}`, cors),
        );
      } else sendJson(res, 200, { sessions: [...hubs.values()].map((h) => h.info()) }, cors, admitted.head);
      return true;
    }
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
      if (stats.streams + joining < maxStreams) return false;
      stats.refusedBusy++;
      refuse(res, 503, 'relay_busy', 'too many streams', { ...cors, 'retry-after': String(Math.ceil(retryMs / 1000)) });
      return true;
    };
    if (fleetReady) {
      if (busy()) return true;
      const id = sessionId;
      const retryAfter = { ...cors, 'retry-after': String(Math.ceil(retryMs / 1000)) };
      // A slot is held while Redis is read, so joins under way count against maxStreams.
      joining++;
      fleetReady
        .then((f) => f.join(id, lastRaw, res, admitted.head, openStream))
        .then(
          (r) => {
            if (r.kind === 'not_found') refuse(res, 404, 'not_found', 'no such session', cors);
            else if (r.kind === 'bad_cursor') refuse(res, 400, 'invalid_argument', `Last-Event-ID ${String(lastRaw).slice(0, 40)} is not a position of this relay's streams`, cors);
            else if (r.kind === 'unavailable') refuse(res, 503, 'redis_unavailable', 'the relay cannot read Redis now', retryAfter);
          },
          () => (res.headersSent ? res.destroy() : refuse(res, 503, 'redis_unavailable', 'the relay cannot read Redis', retryAfter)),
        )
        .finally(() => joining--);
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

  const listen = async (o: { readonly port?: number; readonly host?: string; readonly onRequest?: ((req: IncomingMessage, res: ServerResponse) => boolean) | undefined } = {}): Promise<{ url: string; port: number }> => {
    if (server) throw new InputError('invalid_argument', 'the relay is already listening');
    // Without ioredis, or with a bad prefix, a relay from Redis fails here, before it listens.
    await fleetReady;
    const s = createServer({ maxHeaderSize: settings.maxHeaderBytes, headersTimeout: settings.headersTimeoutMs, requestTimeout: 0 }, (req, res) => {
      if (o.onRequest?.(req, res)) return;
      if (!handle(req, res)) refuse(res, 404, 'not_found', 'not found');
    });
    s.maxConnections = settings.maxConnections;
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
    get redisConnected() {
      return fleet?.reader.connected;
    },
    close,
  };
}
