// The local emulator's front door: one HTTP server on loopback that routes batch requests
// and WebSocket upgrades, with the accounts and scenario every route shares.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { WebSocketServer } from 'ws';
import { AccountBook, type OrganizationSpec } from './accounts.js';
import { parseScenario, scenarioNote, type Scenario, type ScenarioInput } from './scenario.js';
import { EMULATOR_HEADER } from '../schema/emulatorHeader.js';
import { StreamingConnection, type ConnectionSummary } from './StreamingConnection.js';
import { decideHandshake, formatFromQuery, GOING_AWAY_CLOSE_CODE } from './streamingProtocol.js';
import { findStreamingRoute } from './endpoints.js';
import { batchRoutes } from './batchRoutes.js';
import { platformRoutes } from './platformRoutes.js';
import { DEFAULT_EMULATOR_LIMITS, matchRoute, refuse, type EmulatorContext, type EmulatorLimits, type HttpRoute } from './routes.js';

/** The development key of the default organization, printed at start. */
export const DEV_API_KEY = 'svc-emulator-dev-key';

/** Options of {@link startEmulator}: listen address, organizations and keys, the scenario(s) to play, logging and extra routes. */
export interface EmulatorOptions {
  /** Interface to listen on. Default 127.0.0.1 (loopback). */
  readonly host?: string | undefined;
  /** Port; 0 (the default) picks a free one. */
  readonly port?: number | undefined;
  /** Organizations; default: one development organization holding `apiKey`. */
  readonly organizations?: readonly OrganizationSpec[] | undefined;
  /** The development key. Default `svc-emulator-dev-key`. */
  readonly apiKey?: string | undefined;
  /** What the streaming endpoint plays: one scenario for every connection, or one chosen per connection. */
  readonly scenario?: (ScenarioInput | ((req: IncomingMessage) => ScenarioInput)) | undefined;
  /** Where the emulator writes its log lines (never a key). Default: nowhere. */
  readonly log?: ((line: string) => void) | undefined;
  /** Orchestration API account identifier and key. */
  readonly platform?: { readonly accountUuid?: string | undefined; readonly apiKey?: string | undefined } | undefined;
  /** Extra HTTP routes, tried before the built-in ones (tests use them for faults). */
  readonly routes?: readonly HttpRoute[] | undefined;
  /** Caps on what one peer may send (inactivity, message and form sizes); each defaults as in {@link DEFAULT_EMULATOR_LIMITS}. */
  readonly limits?: { readonly [K in keyof EmulatorLimits]?: EmulatorLimits[K] | undefined } | undefined;
}

/**
 * A started emulator: its base URLs and development credentials for both APIs, the
 * organizations and their live limit counters, summaries of finished streaming
 * connections, and `close()`.
 */
export interface RunningEmulator {
  /** Models API base, e.g. `http://127.0.0.1:41234`. */
  readonly baseUrl: string;
  readonly apiKey: string;
  /** Orchestration API base (same server, under `/platform`). */
  readonly platformUrl: string;
  readonly accountUuid: string;
  readonly platformApiKey: string;
  readonly port: number;
  readonly accounts: AccountBook;
  /** Summaries of finished streaming connections, oldest first. */
  readonly connections: readonly ConnectionSummary[];
  /** The `KEY=value` lines a shell can `eval`. */
  envLines(): string[];
  /** Stop listening, close every socket; resolves when all are gone. */
  close(): Promise<void>;
  /**
   * A planned shutdown or restart (what SIGTERM and SIGINT do to `svc-stream emulator`): stop
   * accepting connections, send every live streaming session an `error` event and close it
   * with the going-away code {@link GOING_AWAY_CLOSE_CODE} (1012), give the peers up to
   * `graceMs` (default 1000) to answer the close frame, then {@link RunningEmulator.close}.
   */
  shutdown(options?: { readonly graceMs?: number | undefined }): Promise<void>;
}

/** The orchestration API's development account and key, printed at start. */
export const DEV_ACCOUNT_UUID = '00000000-0000-4000-8000-000000000001';
/** The orchestration API development key (`apikey` header, §5.2), printed at start. */
export const DEV_PLATFORM_API_KEY = 'svc-emulator-platform-key';

/**
 * Start the emulator on loopback.
 *
 * ## Example
 * ```ts
 * import { startEmulator } from 'svc-stream/emulator';
 *
 * const emu = await startEmulator();
 * console.log(emu.envLines().join('\n'));
 * await emu.close();
 * ```
 */
export async function startEmulator(options: EmulatorOptions = {}): Promise<RunningEmulator> {
  const apiKey = options.apiKey ?? DEV_API_KEY;
  const accounts = new AccountBook(options.organizations ?? [{ id: 'dev-org', keys: [apiKey] }]);
  const log = options.log ?? (() => undefined);
  const connections: ConnectionSummary[] = [];
  const sockets = new Set<Socket>();
  /** Streaming connections still open, so a shutdown can tell each one it is going away. */
  const live = new Set<StreamingConnection>();
  const staticScenario: Scenario | undefined = typeof options.scenario === 'function' ? undefined : parseScenario(options.scenario ?? {});

  const scenarioFor = (req: IncomingMessage): Scenario =>
    staticScenario ?? parseScenario((options.scenario as (r: IncomingMessage) => ScenarioInput)(req));

  const limits = resolveLimits(options.limits);
  const ctx: EmulatorContext = {
    accounts,
    log,
    limits,
    platform: {
      accountUuid: options.platform?.accountUuid ?? DEV_ACCOUNT_UUID,
      apiKey: options.platform?.apiKey ?? DEV_PLATFORM_API_KEY,
    },
  };
  const routes: HttpRoute[] = [...(options.routes ?? []), ...batchRoutes, ...platformRoutes];

  const handle = (req: IncomingMessage, res: ServerResponse, expectsContinue: boolean): void => {
    const url = new URL(req.url ?? '/', 'http://emulator');
    // Every answer says the emulator made it (a header the service never sends; bodies stay the contract's).
    res.setHeader(EMULATOR_HEADER, 'stand-in');
    log(`${req.method} ${url.pathname}`);
    const route = matchRoute(routes, req.method ?? 'GET', url.pathname);
    if (!route) {
      // No body is wanted: answer without reading it (and without a 100 Continue).
      refuse(req, res, 404, { detail: 'Not Found' });
      return;
    }
    if (expectsContinue && !route.authenticatesFirst) res.writeContinue();
    Promise.resolve()
      .then(() => route.handler(req, res, url, ctx))
      .catch((err: unknown) => {
        log(`internal error on ${url.pathname}: ${(err as Error).message}`);
        refuse(req, res, 500, { detail: 'Internal server error' });
      });
  };
  const server: Server = createServer((req, res) => handle(req, res, false));
  // With this listener Node leaves `100 Continue` to us: routes that authenticate first send it
  // only to an authenticated client, so a refused one never sends its body at all.
  server.on('checkContinue', (req: IncomingMessage, res: ServerResponse) => handle(req, res, true));
  server.on('connection', (s: Socket) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });

  // ws fixes a connection's message limit when it opens, from its server's options: one
  // WebSocketServer per limit (a refused connection's, an admitted one's), chosen at the handshake.
  const servers = new Map<number, WebSocketServer>();
  const serverFor = (maxPayload: number): WebSocketServer => {
    let wss = servers.get(maxPayload);
    if (!wss) {
      servers.set(maxPayload, (wss = new WebSocketServer({ noServer: true, perMessageDeflate: false, maxPayload })));
      wss.on('headers', (headers, req) => headers.push(`${EMULATOR_HEADER}: ${upgradeNotes.get(req) ?? 'stand-in'}`));
    }
    return wss;
  };
  /** What each upgrade's answer says it is (see EMULATOR_HEADER): scripted, or speech segments only. */
  const upgradeNotes = new WeakMap<IncomingMessage, string>();
  const openSockets = (): number => [...servers.values()].reduce((n, wss) => n + wss.clients.size, 0);
  server.on('upgrade', (req: IncomingMessage, socket: Socket, head: Buffer) => {
    const url = new URL(req.url ?? '/', 'http://emulator');
    const endpoint = findStreamingRoute(url.pathname);
    log(`WS ${url.pathname}`);
    if (!endpoint) {
      socket.end('HTTP/1.1 404 Not Found\r\ncontent-type: application/json\r\nconnection: close\r\n\r\n{"detail":"Not Found"}');
      return;
    }
    let scenario: Scenario;
    try {
      scenario = scenarioFor(req);
    } catch (err) {
      const body = JSON.stringify({ detail: `emulator scenario is invalid: ${(err as Error).message}` });
      socket.end(`HTTP/1.1 500 Internal Server Error\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`);
      return;
    }
    const refusal = scenario.faults.find((f) => f.at === 'handshake' && f.action === 'http');
    if (refusal) {
      const status = refusal.status ?? 503;
      const body = JSON.stringify({ detail: refusal.detail ?? 'Service temporarily unavailable. Please try again later.' });
      socket.end(`HTTP/1.1 ${status} Refused\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`);
      return;
    }
    upgradeNotes.set(req, scenarioNote(scenario));
    const handshake = decideHandshake(req, endpoint, accounts, scenario, limits);
    // A slot taken for a handshake ws then refuses (a malformed upgrade) goes back when its socket closes.
    let upgraded = false;
    if (handshake.ok) socket.once('close', () => upgraded || handshake.release());
    serverFor(handshake.maxMessageBytes).handleUpgrade(req, socket, head, (ws) => {
      upgraded = true;
      const connection: StreamingConnection = new StreamingConnection(ws, socket, formatFromQuery(url), handshake, {
        accounts,
        endpoint,
        scenario,
        log,
        limits,
        onEnd: (s) => {
          live.delete(connection);
          connections.push(s);
        },
      });
      live.add(connection);
    });
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, options.host ?? '127.0.0.1', () => resolve());
  });
  const addr = server.address() as AddressInfo;
  const host = addr.family === 'IPv6' ? `[${addr.address}]` : addr.address;
  const baseUrl = `http://${host}:${addr.port}`;
  const platformUrl = `${baseUrl}/platform`;

  let closing: Promise<void> | undefined;
  const close = (): Promise<void> =>
    (closing ??= new Promise<void>((resolve) => {
      for (const wss of servers.values()) {
        for (const c of wss.clients) c.terminate();
        wss.close();
      }
      server.close(() => resolve());
      for (const s of sockets) s.destroy();
    }));
  let shuttingDown: Promise<void> | undefined;
  const shutdown = (graceMs = 1_000): Promise<void> =>
    (shuttingDown ??= (async () => {
      server.close(); // no new connections; the open ones are ended below
      log(`shutting down: ${live.size} live session(s) closed with ${GOING_AWAY_CLOSE_CODE}`);
      for (const c of [...live]) c.goAway();
      const until = Date.now() + graceMs;
      while (openSockets() > 0 && Date.now() < until) await new Promise((r) => setTimeout(r, 10));
      await close();
    })());
  return {
    baseUrl,
    apiKey,
    platformUrl,
    accountUuid: ctx.platform.accountUuid,
    platformApiKey: ctx.platform.apiKey,
    port: addr.port,
    accounts,
    connections,
    envLines: () => [
      `SVC_BASE_URL=${baseUrl}`,
      `SVC_API_KEY=${apiKey}`,
      `SVC_PLATFORM_URL=${platformUrl}`,
      `SVC_ACCOUNT_UUID=${ctx.platform.accountUuid}`,
      `SVC_PLATFORM_API_KEY=${ctx.platform.apiKey}`,
    ],
    close,
    shutdown: (options) => shutdown(options?.graceMs),
  };
}

function resolveLimits(given: EmulatorOptions['limits']): EmulatorLimits {
  const limits: EmulatorLimits = { ...DEFAULT_EMULATOR_LIMITS };
  for (const [k, v] of Object.entries(given ?? {}) as [keyof EmulatorLimits, number | undefined][]) {
    if (v === undefined) continue;
    if (!Number.isFinite(v) || v < 0 || (k !== 'inactivityTimeoutMs' && v < 1)) throw new RangeError(`emulator limits: ${k} must be a positive number, got ${v}`);
    (limits as Record<keyof EmulatorLimits, number>)[k] = v;
  }
  return limits;
}
