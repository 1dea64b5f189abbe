// What both dashboards' HTTP servers share: they answer only on loopback, to their own Host
// names (no DNS rebinding), with headers that allow nothing but the server itself.
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { originDecision } from '../relay/access.js';

/** Nothing but this server: no CDN, no inline script, no frames. */
export const SECURITY_HEADERS = {
  'content-security-policy': "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'cache-control': 'no-store',
} as const;

/** Refuse other Host names, so a web page cannot reach the server by DNS rebinding. */
export function hostAllowed(req: IncomingMessage, port: number): boolean {
  const host = req.headers.host ?? '';
  return [`127.0.0.1:${port}`, `localhost:${port}`, `[::1]:${port}`].includes(host.toLowerCase());
}

/**
 * The door of every route of a dashboard: its own Host names (no DNS rebinding), and no Origin
 * but its own (a page elsewhere, or a sandboxed `null` one, gets 403). Answers the refusal and
 * returns false.
 */
export function pageRequestAllowed(req: IncomingMessage, res: ServerResponse, port: number): boolean {
  if (!hostAllowed(req, port)) {
    send(res, 403, 'text/plain; charset=utf-8', 'forbidden host\n');
    return false;
  }
  if (originDecision(req.headers, NO_OTHER_ORIGIN).kind === 'refused') {
    send(res, 403, 'text/plain; charset=utf-8', 'forbidden origin\n');
    return false;
  }
  return true;
}

const NO_OTHER_ORIGIN: ReadonlySet<string> = new Set();

/** A whole response with the security headers. */
export function send(res: ServerResponse, status: number, type: string, body: string): void {
  res.writeHead(status, { 'content-type': type, 'content-length': Buffer.byteLength(body), ...SECURITY_HEADERS });
  res.end(body);
}

/** Listen on 127.0.0.1 (`port`, default a free one), at most 256 connections; resolves with the port. */
export async function listenLoopback(server: Server, port = 0): Promise<number> {
  server.maxConnections = 256;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  return (server.address() as AddressInfo).port;
}

/** The files a dashboard serves: path → [content type, body]. */
export type PageFiles = Readonly<Record<string, readonly [type: string, body: string]>>;

/** Content types of the pages' files. */
export const HTML = 'text/html; charset=utf-8';
export const SCRIPT = 'text/javascript; charset=utf-8';
export const STYLES = 'text/css; charset=utf-8';

/** One of `files`, the favicon (204), or 404; anything but GET and HEAD is 405. */
export function sendFile(req: IncomingMessage, res: ServerResponse, path: string, files: PageFiles): void {
  if (req.method !== 'GET' && req.method !== 'HEAD') return send(res, 405, 'text/plain; charset=utf-8', 'method not allowed\n');
  const file = files[path];
  if (file) return send(res, 200, file[0], file[1]);
  if (path === '/favicon.ico') {
    res.writeHead(204, SECURITY_HEADERS);
    res.end();
    return;
  }
  send(res, 404, 'text/plain; charset=utf-8', 'not found\n');
}
