// The seam between the emulator's front door and its endpoint modules: each module
// contributes HTTP routes keyed by "METHOD /path" (or a prefix) and shares one context.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AccountBook } from './accounts.js';

export interface EmulatorContext {
  readonly accounts: AccountBook;
  readonly log: (line: string) => void;
  /** The orchestration API's account identifier and key (§5.2). */
  readonly platform: { readonly accountUuid: string; readonly apiKey: string };
}

export type HttpHandler = (req: IncomingMessage, res: ServerResponse, url: URL, ctx: EmulatorContext) => void | Promise<void>;

export interface HttpRoute {
  readonly method: string;
  /** Exact path, or a prefix when it ends with `/*`. */
  readonly path: string;
  readonly handler: HttpHandler;
}

export function sendJson(res: ServerResponse, status: number, body: unknown): void {
  if (res.headersSent) return;
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

export function matchRoute(routes: readonly HttpRoute[], method: string, pathname: string): HttpRoute | undefined {
  return routes.find(
    (r) => r.method === method && (r.path === pathname || (r.path.endsWith('/*') && pathname.startsWith(r.path.slice(0, -1)))),
  );
}
