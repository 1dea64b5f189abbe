// A TCP proxy on loopback that stands for the network between a client and a server: it
// forwards, blackholes (a NAT that forgot the flow, a pulled cable), stalls (a congested path
// that holds every byte and then delivers it), resets or delays both directions of every
// connection, on command, so tests can break a live session for real.
import { createConnection, createServer, type AddressInfo, type Socket } from 'node:net';

/**
 * How the proxy treats bytes right now. `forward`: pass them on; `blackhole`: swallow them in
 * both directions, sending no FIN and no RST (each side sees a live but silent peer);
 * `stall`: read nothing in either direction, losing nothing (the bytes wait in the sockets'
 * buffers, and the senders feel TCP's backpressure) until another mode lets them through;
 * `delay`: pass them on after `delayMs`, in order; `refuse`: reset every new connection at
 * once (a server that is down), open ones pass bytes on.
 */
export type ProxyMode = 'forward' | 'blackhole' | 'stall' | 'delay' | 'refuse';

export interface TcpProxy {
  /** The proxy's port on 127.0.0.1. */
  readonly port: number;
  /** `http://127.0.0.1:PORT`, for a client's `baseUrl`. */
  readonly baseUrl: string;
  /** Connections accepted so far. */
  readonly accepted: () => number;
  /** Connections open now (each a client and a server socket). */
  readonly open: () => number;
  /** Bytes swallowed by `blackhole`, both directions. */
  readonly swallowed: () => number;
  /** Change the mode of every connection, present and future. */
  setMode(mode: ProxyMode, delayMs?: number): void;
  /** Reset every open connection: RST to both sides (no FIN). */
  reset(): void;
  /** Point new connections at another port (a restarted server). */
  retarget(port: number): void;
  /** Stop listening and destroy every connection. */
  close(): Promise<void>;
}

interface Pair {
  readonly client: Socket;
  readonly server: Socket;
}

/** Start a proxy on 127.0.0.1 (port 0) to `targetPort` on 127.0.0.1, forwarding. */
export async function startTcpProxy(targetPort: number): Promise<TcpProxy> {
  let target = targetPort;
  let mode: ProxyMode = 'forward';
  let delayMs = 0;
  let accepted = 0;
  let swallowed = 0;
  const pairs = new Set<Pair>();
  const timers = new Set<NodeJS.Timeout>();

  const pipe = (from: Socket, to: Socket): void => {
    from.on('data', (chunk: Buffer) => {
      if (mode === 'blackhole') {
        swallowed += chunk.length;
        return;
      }
      if (mode === 'delay' && delayMs > 0) {
        const t = setTimeout(() => {
          timers.delete(t);
          if (!to.destroyed) to.write(chunk);
        }, delayMs);
        timers.add(t);
        return;
      }
      if (!to.destroyed) to.write(chunk);
    });
    // A FIN is passed on as a FIN, a close as a close, unless the proxy is blackholing.
    from.on('end', () => {
      if (mode !== 'blackhole' && !to.destroyed) to.end();
    });
    from.on('close', () => {
      if (mode !== 'blackhole' && !to.destroyed) to.destroy();
    });
    from.on('error', () => undefined);
  };

  const server = createServer((client) => {
    accepted++;
    if (mode === 'refuse') {
      client.on('error', () => undefined);
      client.resetAndDestroy();
      return;
    }
    client.pause();
    const upstream = createConnection({ host: '127.0.0.1', port: target });
    const pair: Pair = { client, server: upstream };
    pairs.add(pair);
    const forget = (): void => {
      if (client.destroyed && upstream.destroyed) pairs.delete(pair);
    };
    client.on('close', forget);
    upstream.on('close', forget);
    upstream.on('error', () => client.destroy());
    upstream.once('connect', () => {
      if (mode === 'stall') upstream.pause();
      else client.resume();
    });
    pipe(client, upstream);
    pipe(upstream, client);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;

  return {
    port,
    baseUrl: `http://127.0.0.1:${port}`,
    accepted: () => accepted,
    open: () => pairs.size,
    swallowed: () => swallowed,
    setMode(next, ms = 0) {
      const was = mode;
      mode = next;
      delayMs = ms;
      // A stall stops reading both sockets of every pair; leaving it reads them again.
      if (next === 'stall' && was !== 'stall') for (const p of pairs) (p.client.pause(), p.server.pause());
      if (was === 'stall' && next !== 'stall') for (const p of pairs) (p.client.resume(), p.server.resume());
    },
    reset() {
      for (const { client, server: up } of pairs) {
        client.resetAndDestroy();
        up.resetAndDestroy();
      }
    },
    retarget(next) {
      target = next;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const t of timers) clearTimeout(t);
        timers.clear();
        for (const { client, server: up } of pairs) {
          client.destroy();
          up.destroy();
        }
        pairs.clear();
        server.close(() => resolve());
      }),
  };
}
