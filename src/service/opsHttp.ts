// The operator's endpoints of a service: /healthz (the process answers), /readyz (it takes new
// calls) and /metrics (Prometheus' text format), answered on the command's own HTTP port or on a
// port of their own (--metrics-port).
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Readiness } from './lifecycle.js';

/** One answer of an operator's endpoint. */
export interface OpsAnswer {
  readonly status: number;
  readonly contentType: string;
  readonly body: string;
}

/** The paths answered. */
/** The operator's paths every long-running command serves: alive, taking calls, Prometheus' figures. */
export type OpsPath = '/healthz' | '/readyz' | '/metrics';
/** The operator's paths, as a list. */
export const OPS_PATHS: readonly OpsPath[] = ['/healthz', '/readyz', '/metrics'];

/** What the endpoints read: the service's readiness, and its figures. */
export interface OpsBackend {
  readiness(): Readiness | Promise<Readiness>;
  /** Prometheus' text (with workers: summed over them), or a reason it cannot be had (prom-client missing). */
  metrics(): Promise<{ readonly contentType: string; readonly text: string } | { readonly unavailable: string }>;
}

/** Whether `path` (a request's, query included) is one of the operator's endpoints. */
export function opsPath(url: string | undefined): OpsPath | undefined {
  const path = (url ?? '/').split('?')[0];
  return (OPS_PATHS as readonly string[]).includes(path!) ? (path as OpsPath) : undefined;
}

/**
 * The answer to `path`: `/healthz` 200 (answering at all says the event loop turns);
 * `/readyz` 200 when the service takes new calls, else 503 with the reason (JSON either way);
 * `/metrics` 200 with the exposition, 503 when it cannot be had.
 */
export async function opsAnswer(path: OpsPath, backend: OpsBackend): Promise<OpsAnswer> {
  if (path === '/healthz') return { status: 200, contentType: 'application/json', body: '{"status":"ok"}\n' };
  if (path === '/readyz') {
    const r = await backend.readiness();
    return { status: r.ready ? 200 : 503, contentType: 'application/json', body: `${JSON.stringify({ ready: r.ready, ...(r.reason !== undefined ? { reason: r.reason } : {}) })}\n` };
  }
  const m = await backend.metrics();
  if ('unavailable' in m) return { status: 503, contentType: 'text/plain; charset=utf-8', body: `${m.unavailable}\n` };
  return { status: 200, contentType: m.contentType, body: m.text };
}

/** Write `answer` to `res` (GET and HEAD only; another method gets 405). */
export function writeOpsAnswer(req: IncomingMessage, res: ServerResponse, answer: OpsAnswer): void {
  if (req.method !== 'GET' && req.method !== 'HEAD') {
    res.writeHead(405, { allow: 'GET, HEAD', 'content-type': 'text/plain' }).end('method not allowed\n');
    return;
  }
  res.writeHead(answer.status, { 'content-type': answer.contentType, 'cache-control': 'no-store', 'content-length': Buffer.byteLength(answer.body) });
  res.end(req.method === 'HEAD' ? undefined : answer.body);
}

/**
 * A request listener for a server that has other routes: answers the operator's paths through
 * `answer` and returns true, or returns false and leaves the request to the caller.
 */
export function opsRoute(answer: (path: OpsPath) => Promise<OpsAnswer>): (req: IncomingMessage, res: ServerResponse) => boolean {
  return (req, res) => {
    const path = opsPath(req.url);
    if (path === undefined) return false;
    answer(path).then(
      (a) => writeOpsAnswer(req, res, a),
      (err: unknown) => writeOpsAnswer(req, res, { status: 500, contentType: 'text/plain', body: `${(err as Error)?.message ?? String(err)}\n` }),
    );
    return true;
  };
}

/** A server of its own for the operator's paths (`--metrics-port`). */
export interface OpsServer {
  readonly port: number;
  close(): Promise<void>;
}

/** Listen on `host:port` for the operator's paths only (anything else 404). Rejects with the listen error (EADDRINUSE). */
export function startOpsServer(host: string, port: number, answer: (path: OpsPath) => Promise<OpsAnswer>): Promise<OpsServer> {
  const route = opsRoute(answer);
  const server: Server = createServer((req, res) => {
    if (!route(req, res)) res.writeHead(404, { 'content-type': 'text/plain' }).end('not found: /healthz, /readyz, /metrics\n');
  });
  // A scrape keeps its connection; the server must not keep the process up for it.
  server.keepAliveTimeout = 5_000;
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve({
        port: (server.address() as AddressInfo).port,
        close: () =>
          new Promise<void>((done) => {
            server.close(() => done());
            server.closeAllConnections();
          }),
      });
    });
  });
}
