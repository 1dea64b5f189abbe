// Loopback HTTP servers that record what reached them (method, path, headers) and whether each
// connection was closed, for the HTTP core and redaction tests.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, expect } from 'vitest';
import { SvcError } from '../../src/errors/index.js';
import { wavHeader } from './wavHeader.js';

export interface Seen {
  readonly method: string;
  readonly url: string;
  readonly headers: IncomingMessage['headers'];
}

export interface Loopback {
  /** `http://127.0.0.1:PORT`. */
  readonly origin: string;
  readonly seen: Seen[];
  /** Connections the client (or the server) closed so far. */
  readonly closed: () => number;
  /** Resolves once `n` connections have closed. */
  closedAtLeast(n: number): Promise<void>;
  close(): Promise<void>;
}

export type Handler = (req: IncomingMessage, res: ServerResponse) => void;

export async function loopback(handler: Handler): Promise<Loopback> {
  const seen: Seen[] = [];
  const sockets = new Set<Socket>();
  let closed = 0;
  const waiters: Array<{ n: number; resolve: () => void }> = [];
  const server = createServer((req, res) => {
    seen.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers });
    res.on('error', () => undefined);
    handler(req, res);
  });
  server.on('connection', (s: Socket) => {
    sockets.add(s);
    s.on('error', () => undefined);
    s.on('close', () => {
      sockets.delete(s);
      closed++;
      for (const w of waiters.splice(0)) {
        if (closed >= w.n) w.resolve();
        else waiters.push(w);
      }
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    origin,
    seen,
    closed: () => closed,
    closedAtLeast: (n) => (closed >= n ? Promise.resolve() : new Promise((resolve) => waiters.push({ n, resolve }))),
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

/** Read the whole request body, then answer JSON. */
export function json(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
}

/** A temp dir with a small WAV file for uploads (the batch calls check its extension and size, the CLI its header). */
export function tinyWav(): { path: string; remove(): void } {
  const dir = mkdtempSync(join(tmpdir(), 'svc-http-test-'));
  const path = join(dir, 'a.wav');
  // A real WAV (16 kHz mono s16le, 4,096 bytes in all): the CLI checks a file's header before it sends it.
  const data = Buffer.alloc(4096 - 44, 1);
  writeFileSync(path, Buffer.concat([wavHeader(data.length), data]));
  return { path, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

/** Every header a key may travel in. */
export const KEY_HEADERS = ['x-api-key', 'apikey', 'accountuuid', 'authorization'] as const;

/**
 * Loopback servers for one test file, closed after each test, and a tiny WAV for its uploads:
 * call at the top of the file. `serve(handler)` starts one; `wav()` is the file.
 */
export function loopbackFixture(): { serve(handler: Handler): Promise<Loopback>; wav(): { path: string } } {
  let open: Loopback[] = [];
  let file: ReturnType<typeof tinyWav> | undefined;
  beforeAll(() => {
    file = tinyWav();
  });
  afterAll(() => file?.remove());
  afterEach(async () => {
    await Promise.all(open.map((l) => l.close()));
    open = [];
  });
  return {
    serve: async (handler) => {
      const l = await loopback(handler);
      open.push(l);
      return l;
    },
    wav: () => file!,
  };
}

/** The SvcError `p` rejects with (the test fails if it resolves or rejects with anything else). */
export async function svcFailure(p: Promise<unknown>): Promise<SvcError> {
  const e = await p.then(
    () => undefined,
    (err: unknown) => err,
  );
  expect(e).toBeInstanceOf(SvcError);
  return e as SvcError;
}
