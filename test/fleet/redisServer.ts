// A real redis-server for the fleet tests: on a free loopback port, no persistence, stopped
// (and waited for) by `stop()`. Also a TCP proxy in front of it that a test can cut.
import { spawn, type ChildProcess } from 'node:child_process';
import { createConnection, createServer, type Server, type Socket } from 'node:net';

export const REDIS_SERVER = '/usr/bin/redis-server';

export interface RunningRedis {
  readonly port: number;
  readonly url: string;
  readonly child: ChildProcess;
  stop(): Promise<void>;
  /** Kill it (SIGKILL: no persistence, so every key is gone) and start a new one on the same port. */
  restart(): Promise<void>;
}

/** A free loopback port (bound then released). */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

async function answers(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = createConnection({ port, host: '127.0.0.1' });
    s.once('connect', () => s.write('PING\r\n'));
    s.once('data', (d) => {
      s.destroy();
      resolve(d.toString().startsWith('+PONG'));
    });
    s.once('error', () => resolve(false));
  });
}

async function spawnRedis(port: number, extraArgs: readonly string[]): Promise<{ child: ChildProcess; exited: Promise<void> }> {
  const child = spawn(REDIS_SERVER, ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--loglevel', 'warning', ...extraArgs], { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr!.setEncoding('utf8').on('data', (c: string) => (stderr += c));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  // Ready once it answers PING: tried every 25 ms, at most 400 times (10 s), or until it exits.
  for (let attempt = 0; !(await answers(port)); attempt++) {
    if (child.exitCode !== null || attempt >= 400) {
      child.kill('SIGKILL');
      throw new Error(`redis-server did not start on ${port}: ${stderr}`);
    }
    await new Promise((r) => setTimeout(r, 25));
  }
  return { child, exited };
}

/** A redis-server on a free loopback port, without persistence; `extraArgs` are more of its options (`--stream-node-max-entries 4`). */
export async function startRedis(extraArgs: readonly string[] = []): Promise<RunningRedis> {
  const port = await freePort();
  let current = await spawnRedis(port, extraArgs);
  const kill = async (): Promise<void> => {
    const { child, exited } = current;
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await exited;
  };
  return {
    port,
    url: `redis://127.0.0.1:${port}`,
    get child() {
      return current.child;
    },
    stop: kill,
    async restart() {
      await kill();
      current = await spawnRedis(port, extraArgs);
    },
  };
}

export interface CuttableProxy {
  readonly url: string;
  /** Close the listener and every connection: the clients behind it lose Redis. */
  cut(): Promise<void>;
  /** Cut every connection now; new ones are still accepted (a network blip). */
  drop(): void;
  /**
   * Let the next command through to Redis, then cut the connection before its reply comes back:
   * Redis did it, the client never hears so. Resolves once that happened.
   */
  loseNextReply(): Promise<void>;
}

/** A TCP proxy to `port` whose `cut()` makes Redis go away for the clients that use it. */
export async function cuttableProxy(port: number): Promise<CuttableProxy> {
  const sockets = new Set<Socket>();
  let losing: (() => void) | undefined;
  const server: Server = createServer((client) => {
    const upstream = createConnection({ port, host: '127.0.0.1' });
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on('close', () => sockets.delete(s));
      s.on('error', () => undefined);
    }
    client.on('data', (d) => {
      upstream.write(d);
    });
    upstream.on('data', (d) => {
      if (losing) {
        const done = losing;
        losing = undefined;
        client.destroy();
        upstream.destroy();
        done();
        return;
      }
      client.write(d);
    });
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const proxyPort = (server.address() as { port: number }).port;
  return {
    url: `redis://127.0.0.1:${proxyPort}`,
    async cut() {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      for (const s of sockets) s.destroy();
      await closed;
    },
    drop() {
      for (const s of sockets) s.destroy();
    },
    loseNextReply() {
      return new Promise<void>((resolve) => (losing = resolve));
    },
  };
}
