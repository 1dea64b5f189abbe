// The test proxy itself: it forwards, blackholes without FIN or RST, resets both sides, delays.
import { createConnection, createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { startTcpProxy, type TcpProxy } from './tcpProxy.js';

let echo: Server | undefined;
let proxy: TcpProxy | undefined;
const sockets: Socket[] = [];
afterEach(async () => {
  for (const s of sockets.splice(0)) s.destroy();
  await proxy?.close();
  await new Promise((r) => (echo ? echo.close(r) : r(undefined)));
  proxy = undefined;
  echo = undefined;
});

/** An echo server whose sockets record how they ended. */
async function startEcho(ends: string[]): Promise<number> {
  echo = createServer((s) => {
    sockets.push(s);
    s.on('data', (d) => s.write(d));
    s.on('end', () => ends.push('server: FIN'));
    s.on('error', (e: NodeJS.ErrnoException) => ends.push(`server: ${e.code}`));
  });
  await new Promise<void>((r) => echo!.listen(0, '127.0.0.1', r));
  return (echo.address() as AddressInfo).port;
}

async function connect(port: number, ends: string[]): Promise<{ socket: Socket; received: () => string }> {
  const socket = createConnection({ host: '127.0.0.1', port });
  sockets.push(socket);
  let got = '';
  socket.on('data', (d) => (got += d.toString()));
  socket.on('end', () => ends.push('client: FIN'));
  socket.on('error', (e: NodeJS.ErrnoException) => ends.push(`client: ${e.code}`));
  await new Promise((r) => socket.once('connect', r));
  return { socket, received: () => got };
}

const until = async (cond: () => boolean, ms = 2_000): Promise<void> => {
  await expect.poll(cond, { timeout: ms, interval: 10 }).toBe(true);
};

describe('startTcpProxy', () => {
  it('forwards both ways, then blackholes both ways without ending either side, then forwards again', async () => {
    const ends: string[] = [];
    proxy = await startTcpProxy(await startEcho(ends));
    const c = await connect(proxy.port, ends);
    c.socket.write('one');
    await until(() => c.received() === 'one');
    expect(c.received()).toBe('one');
    proxy.setMode('blackhole');
    c.socket.write('two');
    // The proxy read 'two' and swallowed it: it can no longer arrive.
    await until(() => proxy!.swallowed() === 3);
    expect(c.received()).toBe('one');
    expect(ends).toEqual([]);
    expect(c.socket.destroyed).toBe(false);
    proxy.setMode('forward');
    c.socket.write('three');
    await until(() => c.received() === 'onethree');
    expect(c.received()).toBe('onethree');
  });

  it('stalls both ways losing nothing: bytes sent meanwhile arrive, in order, once it forwards again', async () => {
    const ends: string[] = [];
    proxy = await startTcpProxy(await startEcho(ends));
    const c = await connect(proxy.port, ends);
    c.socket.write('one');
    await until(() => c.received() === 'one');
    proxy.setMode('stall');
    // A large write as well as small ones: the stall holds them all (TCP backpressure), drops none.
    const big = 'x'.repeat(512 * 1024);
    c.socket.write('two');
    c.socket.write(big);
    c.socket.write('three');
    await new Promise((r) => setTimeout(r, 150));
    expect(c.received()).toBe('one');
    expect(proxy.swallowed()).toBe(0);
    expect(ends).toEqual([]);
    proxy.setMode('forward');
    await until(() => c.received().length === 3 + 3 + big.length + 5, 5_000);
    expect(c.received()).toBe(`onetwo${big}three`);
  });

  it('reset sends RST to both sides', async () => {
    const ends: string[] = [];
    proxy = await startTcpProxy(await startEcho(ends));
    const c = await connect(proxy.port, ends);
    c.socket.write('x');
    await until(() => c.received() === 'x');
    proxy.reset();
    await until(() => ends.length >= 2);
    expect(ends.sort()).toEqual(['client: ECONNRESET', 'server: ECONNRESET']);
  });

  it('delays in order', async () => {
    const ends: string[] = [];
    proxy = await startTcpProxy(await startEcho(ends));
    const c = await connect(proxy.port, ends);
    proxy.setMode('delay', 100);
    c.socket.write('a');
    c.socket.write('b');
    await new Promise((r) => setTimeout(r, 30));
    expect(c.received()).toBe('');
    await until(() => c.received() === 'ab');
    expect(c.received()).toBe('ab');
  });
});
