// The supervisor's dashboard: every call published to one Redis, on one page (status,
// duration, roles, the latest emotion and behaviors per call), each call's live view one click
// away. One reader serves both: the fold of every call here, and the relay the call pages read.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { asyncScheduler, interval, type SchedulerLike, type Subscription } from 'rxjs';
import type { SvcError } from '../errors/index.js';
import type { FollowSink, Follower } from '../fleet/StreamFollower.js';
import { parseServerEventValue } from '../schema/parseServerEvent.js';
import type { FleetSource } from '../relay/fleetSource.js';
import { relayOn } from '../relay/server.js';
import { sseMessage } from '../relay/sse.js';
import { callFoldReducer, fleetCall, initialCallFold, type CallFold, type FleetCall } from './fleetView.js';
import { HTML, hostAllowed, listenLoopback, pageRequestAllowed, SCRIPT, SECURITY_HEADERS, send, sendFile, STYLES, type PageFiles } from './http.js';
import { pageScript } from './pageBundle.js';

/** Options of {@link startFleetDashboard}. */
export interface FleetDashboardOptions {
  /** The Redis the calls are published to (`redis://…`, see `publishSession` and `--publish`). */
  readonly from: string;
  /** The publishers' key prefix. Default `svc-stream`. */
  readonly prefix?: string | undefined;
  /** Port on 127.0.0.1; 0 (the default) picks a free one. */
  readonly port?: number | undefined;
  /** How long an ended call stays on the page. Default 600 000 ms (10 minutes). */
  readonly keepEndedMs?: number | undefined;
  /** How often the page is sent what changed. Default 250 ms. */
  readonly updateMs?: number | undefined;
  /** Called once each time Redis becomes unreachable (the page says so; everything reconnects). */
  readonly onRedisError?: ((error: SvcError) => void) | undefined;
  /** Scheduler of the updates and of the relay's timers. Default `asyncScheduler`. */
  readonly scheduler?: SchedulerLike | undefined;
  /** Plain requests tried first (after the Host check): return true when answered (the operator's `/healthz`, `/readyz`, `/metrics`). */
  readonly onRequest?: ((req: IncomingMessage, res: ServerResponse) => boolean) | undefined;
}

/** A started fleet dashboard. */
export interface RunningFleetDashboard {
  /** The supervisor's page, e.g. `http://127.0.0.1:41234/`. */
  readonly url: string;
  readonly port: number;
  /** Every call the page shows now. */
  calls(): FleetCall[];
  /** Stop following, end every page's stream, stop listening. */
  close(): Promise<void>;
}

/** One call followed for the page. */
interface Watched {
  fold: CallFold;
  partial: boolean;
  follower: Follower | undefined;
  following: boolean;
}

/** Pages whose socket holds more than this are dropped: they reconnect and get the list whole. */
const PAGE_BOUND = 1 << 20;

/**
 * Serve the supervisor's dashboard of a fleet on 127.0.0.1.
 *
 * - `GET /` the page: one row per call (live, then ended for `keepEndedMs`) with its status
 *   (`stale` when its publisher went quiet), duration, roles, latest emotion and behaviors,
 *   updated as calls start, change and end. Each call links to `/call?id=ID`, its live view
 *   (transcript, topics, sentiment, summary) folded in the page from the relay mounted here.
 * - `GET /fleet/events`: server-sent events, `calls` (the whole list) on connect, then `call`
 *   for each call that changed (at most every `updateMs`) and `remove`.
 * - One reader of Redis for the process (two connections): it follows every call for the
 *   page's fold and serves the call pages. Hot; pages come and go.
 * - Answers only on loopback, to its own Host names and origin, on every route (`/fleet/events`
 *   and the relay's included; another Origin, `null` included, gets 403), and refuses a session
 *   id outside its alphabet with 400 before reading Redis; no token (it is a local tool: put it
 *   behind your own guard to share it).
 * - Rejects with `missing_dependency` when ioredis is not installed, `invalid_argument` for a bad URL.
 */
export async function startFleetDashboard(options: FleetDashboardOptions): Promise<RunningFleetDashboard> {
  const scheduler = options.scheduler ?? asyncScheduler;
  const keepEndedMs = options.keepEndedMs ?? 600_000;
  const [{ PAGE_CSS, PAGE_HTML }, { FLEET_CSS, FLEET_HTML }, callScript, fleetScript] = await Promise.all([import('./page.js'), import('./fleetPage.js'), pageScript('page'), pageScript('fleet')]);
  // The fleet's reader loads with the first fleet dashboard, not with 'svc-stream/dashboard'.
  const { openFleetSource } = await import('../relay/fleetSource.js');
  const source: FleetSource = await openFleetSource({
    from: options.from,
    prefix: options.prefix,
    maxClientBufferBytes: 256 << 10,
    stallTimeoutMs: 30_000,
    keepEndedMs,
    scheduler,
    onRedisError: options.onRedisError,
  });
  const relay = relayOn({ token: null, from: options.from, prefix: options.prefix, keepEndedMs, scheduler }, Promise.resolve(source));
  const reader = source.reader;
  const watched = new Map<string, Watched>();
  const dirty = new Set<string>();
  const removed = new Set<string>();
  const pages = new Set<ServerResponse>();
  let closed = false;

  const view = (id: string): FleetCall | undefined => {
    const s = reader.session(id);
    const w = watched.get(id);
    if (!s || !w) return undefined;
    return fleetCall({ ...s, stale: reader.isStale(s) }, w.fold, w.partial);
  };

  const follow = (id: string, w: Watched): void => {
    if (w.following || closed) return;
    w.following = true;
    const sink: FollowSink = {
      entry: (e, _cursor, note) => {
        if (note.reset) {
          w.fold = initialCallFold;
          w.partial = true;
        }
        if (e.kind === 'event') {
          let value: unknown;
          try {
            value = JSON.parse(e.data);
          } catch {
            return true;
          }
          const parsed = parseServerEventValue(value);
          if (parsed.ok) w.fold = callFoldReducer(w.fold, parsed.event);
        }
        if (e.kind === 'end') w.following = false;
        dirty.add(id);
        return true;
      },
    };
    reader.follow(id, undefined, sink).then(
      (joined) => {
        if (joined.kind !== 'follow') {
          // Nothing kept of it (yet): the next change of the directory tries again.
          w.following = false;
          return;
        }
        const f = joined.follower;
        if (closed || watched.get(id) !== w) return f.close();
        w.follower = f;
        f.start();
      },
      () => {
        // Redis away: the next change of the directory (or its sweep) tries again.
        w.following = false;
      },
    );
  };

  const touch = (id: string): void => {
    const s = reader.session(id);
    if (!s) {
      const w = watched.get(id);
      if (w) {
        w.follower?.close();
        watched.delete(id);
        dirty.delete(id);
        removed.add(id);
      }
      return;
    }
    let w = watched.get(id);
    if (!w) {
      w = { fold: initialCallFold, partial: false, follower: undefined, following: false };
      watched.set(id, w);
    }
    if (!w.following && (!s.ended || w.fold.events === 0)) follow(id, w);
    dirty.add(id);
  };

  const changes = reader.changes$.subscribe(touch);
  for (const s of reader.sessions()) touch(s.id);

  const broadcast = (text: string): void => {
    for (const res of pages) {
      if (res.writableLength > PAGE_BOUND) res.destroy();
      else res.write(text);
    }
  };
  const updates: Subscription = interval(options.updateMs ?? 250, scheduler).subscribe(() => {
    // Live calls are re-sent while quiet too: their status may turn stale.
    for (const [id, w] of watched) if (w.following && !dirty.has(id)) {
      const s = reader.session(id);
      if (s && reader.isStale(s)) dirty.add(id);
    }
    for (const id of removed) broadcast(sseMessage('remove', { id }));
    removed.clear();
    for (const id of dirty) {
      const c = view(id);
      if (c) broadcast(sseMessage('call', c));
    }
    dirty.clear();
  });

  const files: PageFiles = {
    '/': [HTML, FLEET_HTML],
    '/index.html': [HTML, FLEET_HTML],
    '/call': [HTML, PAGE_HTML],
    '/app.js': [SCRIPT, callScript],
    '/fleet.js': [SCRIPT, fleetScript],
    '/app.css': [STYLES, PAGE_CSS],
    '/fleet.css': [STYLES, FLEET_CSS],
  };
  let port = 0;
  const server = createServer({ maxHeaderSize: 8 << 10, headersTimeout: 10_000, requestTimeout: 0 }, (req, res) => {
    // Every route passes the same door: its Host, then its Origin (own origin only, `null`
    // refused): the relay's routes in its own gate (with its JSON refusals), the others here.
    if (!hostAllowed(req, port)) return send(res, 403, 'text/plain; charset=utf-8', 'forbidden host\n');
    if (options.onRequest?.(req, res)) return;
    if (relay.handle(req, res)) return;
    if (!pageRequestAllowed(req, res, port)) return;
    const path = new URL(req.url ?? '/', 'http://localhost').pathname;
    if (path !== '/fleet/events') return sendFile(req, res, path, files);
    if (req.method !== 'GET') return send(res, 405, 'text/plain; charset=utf-8', 'method not allowed\n');
    res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'x-accel-buffering': 'no', ...SECURITY_HEADERS });
    const list = [...watched.keys()].map(view).filter((c): c is FleetCall => c !== undefined);
    res.write(`retry: 1000\n\n${sseMessage('calls', { calls: list })}`);
    pages.add(res);
    res.on('close', () => pages.delete(res));
  });
  port = await listenLoopback(server, options.port);

  let closing: Promise<void> | undefined;
  const close = (): Promise<void> =>
    (closing ??= (async () => {
      closed = true;
      updates.unsubscribe();
      changes.unsubscribe();
      for (const w of watched.values()) w.follower?.close();
      for (const res of pages) res.destroy();
      await relay.close();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    })());

  return {
    url: `http://127.0.0.1:${port}/`,
    port,
    calls: () => [...watched.keys()].map(view).filter((c): c is FleetCall => c !== undefined),
    close,
  };
}
