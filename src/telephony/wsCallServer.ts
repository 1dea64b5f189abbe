// The HTTP side of the WebSocket call servers (media streams, AudioHook): listen, and decide
// each upgrade before any WebSocket exists: the path, draining, the caller's own check (auth),
// the connections bound here or across workers. What a connection then speaks is the caller's.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import type { SchedulerLike } from 'rxjs';
import { WebSocketServer, type WebSocket } from 'ws';
import type { WorkerHandle } from './callWorker.js';

/** An upgrade refused with an HTTP answer: the status line's code and text, headers, and the earliest time to answer it (the scheduler's clock). */
export interface UpgradeRefusal {
  readonly status: string;
  readonly headers?: Readonly<Record<string, string>> | undefined;
  readonly notBefore?: number | undefined;
}

export interface WsCallServerOptions {
  readonly host: string;
  readonly port: number;
  /** Only upgrades on this path (others: 404). */
  readonly path: string | undefined;
  readonly maxPayload: number;
  readonly maxConnections: number;
  /**
   * A connection over `maxConnections`: completed and closed with 1013 (the media streams'
   * providers read a close code), or answered `503` with `Retry-After` before the upgrade
   * (AudioHook's client retries on it).
   */
  readonly overCapacity: 'close-1013' | 'http-503';
  /** Seconds a 503 asks the client to wait (over capacity, draining). */
  readonly retryAfterS: number;
  /** The caller's check of an upgrade (auth): undefined admits. */
  readonly admit?: ((req: IncomingMessage) => Promise<UpgradeRefusal | undefined>) | undefined;
  /**
   * Plain HTTP requests (not upgrades), before the server's own answer (426): return true when
   * answered (the operator's `/healthz`, `/readyz`, `/metrics` on the same port).
   */
  readonly onRequest?: ((req: IncomingMessage, res: ServerResponse) => boolean) | undefined;
  readonly worker: WorkerHandle | undefined;
  readonly scheduler: SchedulerLike;
  /** A connection was refused for capacity (counted and said by the caller). */
  readonly onOverCapacity: () => void;
  /** An upgrade was refused because the server drains. */
  readonly onDraining?: (() => void) | undefined;
  readonly onConnection: (ws: WebSocket, req: IncomingMessage) => void;
  readonly onListening: (address: AddressInfo) => void;
  readonly onError: (err: Error) => void;
}

/** The running server: how many connections are open, drain, close. */
export interface WsCallServer {
  readonly open: number;
  /** From now on every upgrade is answered 503 with Retry-After; open connections go on. */
  drain(): void;
  /** Stop: every socket is destroyed (the caller ends its connections first). */
  close(): void;
}

/** Close code of a connection over `maxConnections` (RFC 6455 registry: Try Again Later). */
export const OVER_CAPACITY_CLOSE_CODE = 1013;

/** Listen and decide every upgrade as `options` say. */
export function wsCallServer(options: WsCallServerOptions): WsCallServer {
  const { worker: handle, scheduler } = options;
  const wss = new WebSocketServer({ noServer: true, perMessageDeflate: false, maxPayload: options.maxPayload });
  const http: Server = createServer((req, res) => {
    if (options.onRequest?.(req, res)) return;
    res.writeHead(426, { 'content-type': 'text/plain', connection: 'close' });
    res.end('WebSocket upgrade required\n');
  });
  const sockets = new Set<Socket>();
  http.on('connection', (s: Socket) => {
    sockets.add(s);
    s.once('close', () => sockets.delete(s));
  });
  let open = 0;
  let closing = false;
  let draining = false;

  const answer = (socket: Socket, refusal: UpgradeRefusal): void => {
    const write = (): void => {
      if (socket.destroyed) return;
      const headers = Object.entries(refusal.headers ?? {}).map(([k, v]) => `${k}: ${v}\r\n`).join('');
      socket.end(`HTTP/1.1 ${refusal.status}\r\n${headers}connection: close\r\ncontent-length: 0\r\n\r\n`);
      setTimeout(() => socket.destroy(), 1_000).unref();
    };
    const wait = refusal.notBefore !== undefined ? refusal.notBefore - scheduler.now() : 0;
    if (wait > 0) scheduler.schedule(write, wait);
    else write();
  };
  const unavailable = (): UpgradeRefusal => ({ status: '503 Service Unavailable', headers: { 'retry-after': String(options.retryAfterS) } });

  http.on('upgrade', (req: IncomingMessage, socket: Socket, head: Buffer) => {
    socket.on('error', () => undefined);
    const pathname = new URL(req.url ?? '/', 'http://server').pathname;
    if (options.path && pathname !== options.path) return answer(socket, { status: '404 Not Found' });
    if (draining) {
      options.onDraining?.();
      return answer(socket, unavailable());
    }
    void (async () => {
      const refusal = options.admit ? await options.admit(req) : undefined;
      if (closing || socket.destroyed) return void socket.destroy();
      if (refusal) return answer(socket, refusal);
      // Across workers the primary holds the count; asked before the upgrade completes, so no
      // message can arrive before the connection is taken.
      const shared = handle ? await handle.take('connections', options.maxConnections) : undefined;
      if (closing || socket.destroyed) {
        if (shared) handle!.give('connections');
        return void socket.destroy();
      }
      const full = shared === false || (shared === undefined && open >= options.maxConnections);
      if (full && options.overCapacity === 'http-503') {
        options.onOverCapacity();
        return answer(socket, unavailable());
      }
      wss.handleUpgrade(req, socket, head, (ws) => {
        if (full) {
          options.onOverCapacity();
          ws.on('error', () => undefined);
          ws.close(OVER_CAPACITY_CLOSE_CODE, 'too many connections');
          setTimeout(() => ws.terminate(), 2_000).unref();
          return;
        }
        open++;
        ws.once('close', () => {
          open--;
          if (shared) handle!.give('connections');
        });
        options.onConnection(ws, req);
      });
    })();
  });

  http.on('error', options.onError);
  // In a node:cluster worker the port is the primary's, shared round-robin by every worker.
  http.listen(options.port, options.host, () => {
    const address = http.address() as AddressInfo;
    handle?.listening(address.port);
    options.onListening(address);
  });

  return {
    get open() {
      return open;
    },
    drain: () => {
      draining = true;
    },
    close: () => {
      closing = true;
      for (const client of wss.clients) client.terminate();
      wss.close();
      http.close();
      for (const s of sockets) s.destroy();
    },
  };
}
