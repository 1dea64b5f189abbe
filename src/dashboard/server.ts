// The dashboard's HTTP server on loopback: the page, its script and styles, the current
// state as JSON, and the relay the page reads the session's raw events from.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { skip, Subject, type Observable, type Subscription } from 'rxjs';
import type { ServerEvent } from '../schema/events.js';
import type { SessionStats } from '../session/stats.js';
import type { AudioFormat } from '../schema/audio.js';
import { createRelay } from '../relay/server.js';
import { dashboardSession, type DashboardSession } from './dashboardSession.js';
import { HTML, hostAllowed, listenLoopback, SCRIPT, send, sendFile, STYLES, type PageFiles } from './http.js';
import { pageScript } from './pageBundle.js';
import { DASHBOARD_SESSION_ID } from './sessionId.js';
import type { DashboardView } from './view.js';

/** Options of {@link startDashboard}: the session's events (or how to make them), the page title, the port, when the session starts. */
export interface DashboardOptions {
  /** The session's events, cold: subscribed once, when the session starts. */
  readonly events$: Observable<ServerEvent>;
  /**
   * The counters passed to the session (`conversationSession`, `analyzeConversation`), for
   * `/state`'s `bytes_sent` and `events_received`; the page follows the session's life cycle
   * through their `state$` (`connecting`, `streaming`, `paused`, `reconnecting`…). Without
   * them the page shows `connecting` until the first event, then `streaming`, then how it ended.
   */
  readonly stats?: SessionStats | undefined;
  /** Shown in the page's header (e.g. the file name). */
  readonly title?: string | undefined;
  /** The format sent (a raw format tells the audio figures of `/state`'s `session` as times). */
  readonly format?: AudioFormat | undefined;
  /** Port on 127.0.0.1; 0 (the default) picks a free one. */
  readonly port?: number | undefined;
  /**
   * When the session starts: `'load'` (the default) on the first page load, that is the
   * first connection to the event stream, so the viewer sees it from the start; `'now'` at once.
   */
  readonly start?: 'load' | 'now' | undefined;
  /** Events the relay keeps for pages that reload or join late. Default 100 000 (a whole long session). */
  readonly historyEvents?: number | undefined;
  /** Plain requests tried first (after the Host check): return true when answered (the operator's `/healthz`, `/readyz`, `/metrics`). */
  readonly onRequest?: ((req: IncomingMessage, res: ServerResponse) => boolean) | undefined;
}

/** A started dashboard: the page URL and port, its {@link DashboardSession}, a promise of the final view, and `close()`. */
export interface RunningDashboard {
  /** The page, e.g. `http://127.0.0.1:41234/`. */
  readonly url: string;
  readonly port: number;
  readonly session: DashboardSession;
  /**
   * Resolves with the final view once the session ended and every page connected then was
   * sent the end of the stream (at once when none is connected).
   */
  readonly finalServed: Promise<DashboardView>;
  /** Stop the session if it still runs, end every page's stream, stop listening. */
  close(): Promise<void>;
}

/**
 * Serve a live dashboard of one session on 127.0.0.1.
 *
 * - `GET /` the page; `/app.js` (bundled from the library's own browser code: the relay
 *   client and `splitSession`) and `/app.css` (nothing is fetched from elsewhere);
 *   `GET /state` the current view as JSON, folded on this side.
 * - The page reads the session's raw events from the relay mounted here
 *   (`GET /sessions/session/events`, server-sent events with ids) and folds them itself:
 *   what goes over the wire grows with the events, not with the state. A page that reloads
 *   gets the whole history again; the session's status and its end come on the same stream.
 * - The session starts on the first connection to the event stream (or at once with
 *   `start: 'now'`) and runs to its end whether pages stay or leave.
 * - Hot: one session, whatever the number of pages. The relay needs no token here: it answers
 *   only on loopback, to this server's own Host names and origin.
 */
export async function startDashboard(options: DashboardOptions): Promise<RunningDashboard> {
  // The page text (HTML and styles) and its script load when a dashboard starts, not with
  // the package: `import 'svc-stream'` need not pay for them.
  const [{ PAGE_CSS, PAGE_HTML }, script] = await Promise.all([import('./page.js'), pageScript()]);
  const relay = createRelay({ token: null, historyEvents: options.historyEvents ?? 100_000, historyBytes: 256 << 20 });
  const title = options.title ?? 'session';
  const live = relay.addSession({ id: DASHBOARD_SESSION_ID, title });
  // One subscription to the session feeds both the fold on this side and the relay.
  const hub = new Subject<ServerEvent>();
  live.feed(hub);
  const session: DashboardSession = dashboardSession({
    events$: hub,
    ...(options.stats ? { stats: options.stats } : {}),
    ...(options.format ? { format: options.format } : {}),
    title,
  });
  const running = session;
  let sourceSub: Subscription | undefined;
  const start = (): void => {
    if (sourceSub) return;
    live.setStatus('connecting');
    running.start();
    // The page and the view follow the session's life cycle from its stats: each change
    // (until one comes, `connecting` then what the events show); the relay follows its label too.
    const state$ = options.stats?.state$.pipe(skip(1));
    if (state$) {
      live.follow(options.stats!.state$);
      sourceSub = state$.subscribe((s) => running.setStatus(s.status));
      sourceSub.add(options.events$.subscribe(hub));
    } else sourceSub = options.events$.subscribe(hub);
  };
  const finalServed = running.ended.then(async (view) => {
    if (view.status === 'closed') live.close();
    await live.ended;
    return view;
  });

  const files: PageFiles = { '/': [HTML, PAGE_HTML], '/index.html': [HTML, PAGE_HTML], '/app.js': [SCRIPT, script], '/app.css': [STYLES, PAGE_CSS] };
  let port = 0;
  const server = createServer({ maxHeaderSize: 8 << 10, headersTimeout: 10_000, requestTimeout: 0 }, (req, res) => {
    if (!hostAllowed(req, port)) return send(res, 403, 'text/plain; charset=utf-8', 'forbidden host\n');
    if (options.onRequest?.(req, res)) return;
    const path = new URL(req.url ?? '/', 'http://localhost').pathname;
    if (path === `/sessions/${DASHBOARD_SESSION_ID}/events` && req.method === 'GET') start();
    if (relay.handle(req, res)) return;
    if (path === '/state' && req.method === 'GET') return send(res, 200, 'application/json; charset=utf-8', JSON.stringify(running.view()));
    sendFile(req, res, path, files);
  });
  port = await listenLoopback(server, options.port);
  if (options.start === 'now') start();

  let closing: Promise<void> | undefined;
  const close = (): Promise<void> =>
    (closing ??= (async () => {
      sourceSub?.unsubscribe();
      running.stop();
      await relay.close();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    })());

  return { url: `http://127.0.0.1:${port}/`, port, session: running, finalServed, close };
}
