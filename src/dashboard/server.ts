// The dashboard's HTTP server on loopback: the page, its script and styles, the current
// state as JSON, and the SSE stream a page subscribes to.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { asyncScheduler, throttleTime, type Observable, type SchedulerLike } from 'rxjs';
import type { ServerEvent } from '../schema/events.js';
import type { SessionStats } from '../session/stats.js';
import { dashboardSession, type DashboardSession } from './dashboardSession.js';
import { sseFrame } from './sse.js';
import type { DashboardView } from './view.js';

/** Options of {@link startDashboard}: the session's events and counters, the page title, the port, when the session starts, and the update throttle. */
export interface DashboardOptions {
  /** The session's events, cold: subscribed once, when the session starts. */
  readonly events$: Observable<ServerEvent>;
  /** The counters passed to `conversationSession`, so the page shows every phase. */
  readonly stats?: SessionStats | undefined;
  /** Shown in the page's header (e.g. the file name). */
  readonly title?: string | undefined;
  /** Port on 127.0.0.1; 0 (the default) picks a free one. */
  readonly port?: number | undefined;
  /**
   * When the session starts: `'load'` (the default) on the first page load, that is the
   * first connection to `/events`, so the viewer sees it from the start; `'now'` at once.
   */
  readonly start?: 'load' | 'now' | undefined;
  /** At most one state message per page per this many ms while the session runs. Default 50. */
  readonly throttleMs?: number | undefined;
  /** Scheduler of the throttle and of the counter polling. Default `asyncScheduler`. */
  readonly scheduler?: SchedulerLike | undefined;
}

/** A started dashboard: the page URL and port, its {@link DashboardSession}, a promise of the final view, and `close()`. */
export interface RunningDashboard {
  /** The page, e.g. `http://127.0.0.1:41234/`. */
  readonly url: string;
  readonly port: number;
  readonly session: DashboardSession;
  /** Resolves with the final view once the session ended and a page has been sent all of it. */
  readonly finalServed: Promise<DashboardView>;
  /** Stop the session if it still runs, end every page's stream, stop listening. */
  close(): Promise<void>;
}

const SECURITY_HEADERS = {
  // Nothing but this server: no CDN, no inline script, no frames.
  'content-security-policy': "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'cache-control': 'no-store',
} as const;

/** One page's SSE stream: sends the newest view it has not had yet, never a backlog. */
class Subscriber {
  private sentVersion = -1;
  private blocked = false;
  private closed = false;
  private endSent = false;

  constructor(
    private readonly res: ServerResponse,
    private readonly frameOf: () => { version: number; frame: string },
    private readonly ended: () => boolean,
    private readonly onFinalServed: () => void,
  ) {
    res.on('close', () => (this.closed = true));
  }

  /** Write the current view if it is new; after the session ended, also `end` and close. */
  pump(): void {
    if (this.closed || this.blocked || this.endSent) return;
    const { version, frame } = this.frameOf();
    let ok = true;
    if (version !== this.sentVersion) {
      this.sentVersion = version;
      ok = this.res.write(frame);
    }
    if (this.ended()) {
      this.endSent = true;
      this.res.end(sseFrame('end', {}), () => this.onFinalServed());
      return;
    }
    // A slow page skips the views it could not take; it gets the newest one on drain.
    if (!ok) {
      this.blocked = true;
      this.res.once('drain', () => {
        this.blocked = false;
        this.pump();
      });
    }
  }

  get isClosed(): boolean {
    return this.closed;
  }

  close(): void {
    if (!this.closed) this.res.end();
  }
}

function hostAllowed(req: IncomingMessage, port: number): boolean {
  // Refuse other Host names so a web page cannot reach this server by DNS rebinding.
  const host = req.headers.host ?? '';
  return [`127.0.0.1:${port}`, `localhost:${port}`, `[::1]:${port}`].includes(host.toLowerCase());
}

function send(res: ServerResponse, status: number, type: string, body: string): void {
  res.writeHead(status, { 'content-type': type, 'content-length': Buffer.byteLength(body), ...SECURITY_HEADERS });
  res.end(body);
}

/**
 * Serve a live dashboard of one session on 127.0.0.1.
 *
 * - `GET /` the page; `/app.js` and `/app.css` its script and styles (all from this
 *   module: nothing is fetched from elsewhere); `GET /state` the current view as JSON.
 * - `GET /events` (SSE): first a `state` message with the whole current view, at once,
 *   however late the page connects; then a fresh `state` after each change (at most one
 *   per `throttleMs`, always ending on the newest); when the session has ended, the final
 *   `state`, an `end` message, and the stream closes.
 * - The session starts on the first `/events` connection (or at once with `start: 'now'`)
 *   and runs to its end whether pages stay or leave: reloading a page never restarts it.
 * - Hot: one session, whatever the number of pages.
 */
export async function startDashboard(options: DashboardOptions): Promise<RunningDashboard> {
  // The page text (about 24 kB of HTML, script and styles) loads when a dashboard starts,
  // not with the package: `import 'svc-stream'` need not pay for it.
  const { PAGE_CSS, PAGE_HTML, PAGE_JS } = await import('./page.js');
  const scheduler = options.scheduler ?? asyncScheduler;
  const session = dashboardSession({
    events$: options.events$,
    ...(options.stats ? { stats: options.stats } : {}),
    ...(options.title !== undefined ? { title: options.title } : {}),
    scheduler,
  });
  const subscribers = new Set<Subscriber>();
  let ended = false;
  let frameCache: { version: number; frame: string } | undefined;
  const frameOf = (): { version: number; frame: string } => {
    const view = session.view();
    if (frameCache?.version !== view.version) frameCache = { version: view.version, frame: sseFrame('state', view) };
    return frameCache;
  };

  let resolveServed!: (view: DashboardView) => void;
  const finalServed = new Promise<DashboardView>((resolve) => (resolveServed = resolve));
  const onFinalServed = (): void => resolveServed(session.view());

  const pumpAll = (): void => {
    for (const s of subscribers) {
      if (s.isClosed) subscribers.delete(s);
      else s.pump();
    }
  };
  const changesSub = session.changes$.pipe(throttleTime(options.throttleMs ?? 50, scheduler, { leading: true, trailing: true })).subscribe(() => pumpAll());
  void session.ended.then(() => {
    ended = true;
    changesSub.unsubscribe();
    pumpAll();
    subscribers.clear();
  });

  let port = 0;
  const server = createServer((req, res) => {
    if (!hostAllowed(req, port)) return send(res, 403, 'text/plain; charset=utf-8', 'forbidden host\n');
    if (req.method !== 'GET' && req.method !== 'HEAD') return send(res, 405, 'text/plain; charset=utf-8', 'method not allowed\n');
    const path = new URL(req.url ?? '/', 'http://localhost').pathname;
    switch (path) {
      case '/':
      case '/index.html':
        return send(res, 200, 'text/html; charset=utf-8', PAGE_HTML);
      case '/app.js':
        return send(res, 200, 'text/javascript; charset=utf-8', PAGE_JS);
      case '/app.css':
        return send(res, 200, 'text/css; charset=utf-8', PAGE_CSS);
      case '/state':
        return send(res, 200, 'application/json; charset=utf-8', JSON.stringify(session.view()));
      case '/favicon.ico':
        res.writeHead(204, SECURITY_HEADERS);
        return res.end();
      case '/events': {
        if (req.method !== 'GET') return send(res, 405, 'text/plain; charset=utf-8', 'GET only\n');
        session.start();
        res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', connection: 'keep-alive', 'x-accel-buffering': 'no', ...SECURITY_HEADERS });
        res.write('retry: 1000\n\n');
        const subscriber = new Subscriber(res, frameOf, () => ended, onFinalServed);
        if (!ended) subscribers.add(subscriber);
        subscriber.pump();
        return;
      }
      default:
        return send(res, 404, 'text/plain; charset=utf-8', 'not found\n');
    }
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  port = (server.address() as AddressInfo).port;
  if (options.start === 'now') session.start();

  let closing: Promise<void> | undefined;
  const close = (): Promise<void> =>
    (closing ??= (async () => {
      session.stop();
      changesSub.unsubscribe();
      for (const s of subscribers) s.close();
      subscribers.clear();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    })());

  return { url: `http://127.0.0.1:${port}/`, port, session, finalServed, close };
}
