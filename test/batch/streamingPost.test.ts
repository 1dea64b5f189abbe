// The upload transport: streamed bodies with backpressure, an answer that comes before the
// body is read, refused connections and aborts, against real loopback servers.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { streamingPost } from '../../src/batch/streamingPost.js';

let servers: Server[] = [];
afterEach(async () => {
  await Promise.all(servers.map((s) => new Promise((r) => { s.closeAllConnections(); s.close(r); })));
  servers = [];
});

async function serve(handler: Parameters<typeof createServer>[1]): Promise<URL> {
  const server = createServer(handler);
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return new URL(`http://127.0.0.1:${(server.address() as AddressInfo).port}/upload`);
}

/** `mb` MiB of zeros in 64 KiB chunks, counting what was pulled. */
function body(mb: number, pulled: { bytes: number }): AsyncIterable<Uint8Array> {
  return (async function* () {
    const chunk = new Uint8Array(65_536);
    for (let i = 0; i < mb * 16; i++) {
      pulled.bytes += chunk.length;
      yield chunk;
    }
  })();
}

describe('streamingPost', () => {
  it('sends the whole body and resolves with the answer as a Response', async () => {
    const url = await serve((req, res) => {
      let n = 0;
      req.on('data', (c: Buffer) => (n += c.length));
      req.on('end', () => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ received: n })));
    });
    const pulled = { bytes: 0 };
    const res = await streamingPost(url, { 'content-length': String(8 << 20) }, body(8, pulled), new AbortController().signal);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ received: 8 << 20 });
    expect(pulled.bytes).toBe(8 << 20);
  });

  it('an answer given before the body is read wins over the broken pipe, and reading stops', async () => {
    const url = await serve((req, res) => {
      res.writeHead(413, { 'content-type': 'application/json', connection: 'close' }).end(JSON.stringify({ detail: 'too large' }));
      res.on('finish', () => req.socket.destroy());
    });
    const pulled = { bytes: 0 };
    const res = await streamingPost(url, { 'content-length': String(200 << 20) }, body(200, pulled), new AbortController().signal);
    expect(res.status).toBe(413);
    expect(await res.json()).toEqual({ detail: 'too large' });
    // Backpressure: nowhere near the 200 MiB body was pulled from the source.
    expect(pulled.bytes).toBeLessThan(64 << 20);
  });

  it('a refused connection rejects', async () => {
    const url = await serve(() => undefined);
    await new Promise((r) => { servers[0]!.close(r); });
    servers = [];
    await expect(streamingPost(url, {}, body(1, { bytes: 0 }), new AbortController().signal)).rejects.toThrow(/ECONNREFUSED/);
  });

  it('aborting mid-upload rejects and stops pulling the body', async () => {
    const url = await serve((req) => req.resume());
    const controller = new AbortController();
    const pulled = { bytes: 0 };
    const p = streamingPost(url, { 'content-length': String(1 << 30) }, body(1024, pulled), controller.signal);
    setTimeout(() => controller.abort(), 50);
    await expect(p).rejects.toThrow(/abort/i);
    const atAbort = pulled.bytes;
    await new Promise((r) => setTimeout(r, 100));
    expect(pulled.bytes).toBe(atAbort);
    expect(pulled.bytes).toBeLessThan(1 << 30);
  });
});
