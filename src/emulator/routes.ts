// The seam between the emulator's front door and its endpoint modules: each module
// contributes HTTP routes keyed by "METHOD /path" (or a prefix) and shares one context.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AccountBook } from './accounts.js';

/** What every emulator route handler shares: the organizations (keys and limits), the log, and the orchestration credentials. */
export interface EmulatorContext {
  readonly accounts: AccountBook;
  /** Writes one emulator log line; never pass it an API key. */
  readonly log: (line: string) => void;
  /** The orchestration API's account identifier and key (§5.2). */
  readonly platform: { readonly accountUuid: string; readonly apiKey: string };
}

/** Handles one HTTP request to the emulator; may be async. `url` is already parsed. */
export type HttpHandler = (req: IncomingMessage, res: ServerResponse, url: URL, ctx: EmulatorContext) => void | Promise<void>;

/** An HTTP route for {@link EmulatorOptions.routes}: a method, an exact path or a `/*` prefix, and its handler. */
export interface HttpRoute {
  readonly method: string;
  /** Exact path, or a prefix when it ends with `/*`. */
  readonly path: string;
  readonly handler: HttpHandler;
}

/** Write a JSON response with `status` and the correct content headers; does nothing if headers were already sent. */
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
