// Coalescing: chunks read while an earlier frame is still being written go out as one binary
// frame (the contract lets binary audio frames split anywhere), a source reading in bursts gets
// full frames (the last bytes of a burst wait for the next one, and go once the bursts stop),
// an idle socket gets each chunk of a live source at once, and the nothing-lost account stays
// exact when the server goes away mid-stream.
// A real ws server on loopback, asserting on what it received.
// (Sessions here run with `reconnect: false`: each test is about one session; reconnecting has its own, test/session/reconnect.test.ts.)
import { afterEach, describe, expect, it } from 'vitest';
import { lastValueFrom, Observable } from 'rxjs';
import { WebSocketServer, type WebSocket as ServerSocket } from 'ws';
import { analyzeConversation, createSessionStats, fromAsyncIterable, SessionError, type SessionStats } from 'svc-stream';

const KEY = 'sk-coalescing-0001';
const RAW = { audio_format: 's16le', sample_rate: 16000, num_channels: 1 } as const;

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

interface Server {
  readonly baseUrl: string;
  /** Each binary frame received, in order. */
  readonly frames: Buffer[];
  /** Resolves when the `n`th binary frame (1-based) has arrived. */
  frameArrived(n: number): Promise<void>;
}

/**
 * Takes the config frame, collects binary frames, answers `done` to the end of audio and closes.
 * With `dropAfter`, terminates the connection once that many audio bytes arrived; with
 * `stallEvery`, stops reading for a few milliseconds after each that many bytes (a slow reader,
 * so the client's socket backs up).
 */
async function server(dropAfter?: number, stallEvery?: number): Promise<Server> {
  const wss = new WebSocketServer({ host: '127.0.0.1', port: 0, perMessageDeflate: false });
  await new Promise<void>((r) => wss.once('listening', () => r()));
  const sockets = new Set<ServerSocket>();
  cleanups.push(
    () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.terminate();
        wss.close(() => resolve());
      }),
  );
  const frames: Buffer[] = [];
  const waiters: Array<{ n: number; resolve: () => void }> = [];
  let bytes = 0;
  wss.on('connection', (ws) => {
    sockets.add(ws);
    ws.on('message', (data, isBinary) => {
      const buf = data as Buffer;
      if (isBinary) {
        frames.push(buf);
        bytes += buf.length;
        for (const w of waiters.splice(0)) {
          if (frames.length >= w.n) w.resolve();
          else waiters.push(w);
        }
        if (dropAfter !== undefined && bytes >= dropAfter) ws.terminate();
        if (stallEvery !== undefined && Math.floor(bytes / stallEvery) !== Math.floor((bytes - buf.length) / stallEvery)) {
          ws.pause();
          setTimeout(() => ws.resume(), 5);
        }
        return;
      }
      if (buf.length === 0) {
        ws.send(JSON.stringify({ type: 'done', duration_ms: Math.round(bytes / 32) }));
        ws.close(1000);
      }
    });
  });
  const port = (wss.address() as { port: number }).port;
  return {
    baseUrl: `http://127.0.0.1:${port}`,
    frames,
    frameArrived: (n) => (frames.length >= n ? Promise.resolve() : new Promise((resolve) => waiters.push({ n, resolve }))),
  };
}

/** Chunk `i` of `size` bytes, each byte telling its chunk and position apart from its neighbours'. */
function chunk(i: number, size: number): Uint8Array {
  const c = new Uint8Array(size);
  for (let j = 0; j < size; j++) c[j] = (i * 31 + j) & 0xff;
  return c;
}

/**
 * `count` chunks of `size` bytes of audio in memory from one buffer the source overwrites after
 * each (next() resolves at once, so the source reads in bursts, a turn of the event loop every
 * 256 KiB, faster than the socket takes them), streamed to `srv`: checks every byte arrived in
 * order and the account adds up; returns the stats and how many frames were not full 64 KiB ones.
 */
async function fromReusedBuffer(srv: Server, count: number, size: number, reconnect: false | undefined): Promise<{ stats: SessionStats; short: number }> {
  const reused = new Uint8Array(size);
  async function* frames(): AsyncGenerator<Uint8Array> {
    for (let i = 0; i < count; i++) {
      reused.set(chunk(i, size));
      yield reused;
    }
  }
  const stats = createSessionStats();
  await lastValueFrom(fromAsyncIterable(frames(), { format: RAW }).pipe(analyzeConversation({ reconnect, apiKey: KEY, baseUrl: srv.baseUrl, stats })));
  const expected = Buffer.concat(Array.from({ length: count }, (_, i) => chunk(i, size)));
  expect(Buffer.concat(srv.frames).equals(expected)).toBe(true);
  expect(stats).toMatchObject({ bytesRead: count * size, bytesSent: count * size, framesSent: srv.frames.length });
  return { stats, short: srv.frames.filter((f) => f.length !== 64 * 1024).length };
}

describe('coalescing small chunks', () => {
  it('sends chunks read while a frame is being written as fewer frames carrying exactly the bytes, in order', async () => {
    const srv = await server();
    const count = 5_000;
    const size = 160;
    const emitted: Uint8Array[] = [];
    async function* frames(): AsyncGenerator<Uint8Array> {
      for (let i = 0; i < count; i++) {
        const c = chunk(i, size);
        emitted.push(c);
        yield c;
      }
    }
    const stats = createSessionStats();
    const done = await lastValueFrom(fromAsyncIterable(frames(), { format: RAW }).pipe(analyzeConversation({ reconnect: false, apiKey: KEY, baseUrl: srv.baseUrl, stats })));
    expect(done.type).toBe('done');
    const received = Buffer.concat(srv.frames);
    expect(received.equals(Buffer.concat(emitted))).toBe(true);
    expect(stats).toMatchObject({ bytesRead: count * size, bytesSent: count * size, framesSent: srv.frames.length });
    // Coalesced: far fewer frames than chunks, none much over 64 KiB.
    expect(srv.frames.length).toBeLessThan(count / 10);
    for (const f of srv.frames) expect(f.length).toBeLessThan(64 * 1024 + size);
  });

  it('copies held and queued chunks: a source that overwrites its one buffer after each chunk still gets every chunk sent', async () => {
    const srv = await server();
    const count = 5_000;
    // Every byte arrives as it was read (chunks read before the socket opened are queued: copied too).
    await fromReusedBuffer(srv, count, 160, false);
    expect(srv.frames.length).toBeLessThan(count / 10);
  });

  it.each([
    ['reconnect: false', false],
    ['the default (reconnect on)', undefined],
  ] as const)('a source reading in bursts faster than the socket gets full frames (%s): every frame but a handful is 64 KiB', async (_, reconnect) => {
    const srv = await server();
    const { stats, short } = await fromReusedBuffer(srv, Math.floor((8 << 20) / 3200), 3200, reconnect);
    // The last bytes of a burst wait for the next burst instead of going as a short frame (and
    // leaving the next one short): 128 frames would carry the 8 MiB, a few more may be short.
    expect(srv.frames.length).toBeLessThanOrEqual(Math.ceil(stats.bytesSent / (64 * 1024)) + short);
    expect(short).toBeLessThanOrEqual(8);
  });

  it.each([
    ['reconnect: false', false],
    ['the default (reconnect on)', undefined],
  ] as const)('a burst source held back by a slow socket still gets full frames (%s): pauses for the high-water mark leave no short frames', async (_, reconnect) => {
    // The server stops reading for 5 ms every 256 KiB: the socket backs up, the session pauses
    // the source above its high-water mark, and turns of the event loop pass with no full frame
    // cut while frames are in flight. That is no end of the bursts: the tail still waits, and
    // when the socket drains (a whole batch of frames flushed at once) it goes at the head of
    // the next full frame. (Before, each such pause could leave a short tail, a chunk alone on
    // the idle socket and a frame stopping at the block's end: 39-57 short frames of about 550.)
    const srv = await server(undefined, 256 * 1024);
    const { stats, short } = await fromReusedBuffer(srv, Math.floor((32 << 20) / 3200), 3200, reconnect);
    expect(stats.pauses).toBeGreaterThan(0);
    // 512 frames carry the 32 MiB.
    expect(short).toBeLessThanOrEqual(24);
  });

  it.each([
    ['reconnect: false', false],
    ['the default (reconnect on)', undefined],
  ] as const)('the last bytes of a burst go once the bursts stop, before anything else is read (%s)', async (_, reconnect) => {
    const srv = await server();
    const size = 3200;
    const burst = 100; // 320 000 B: the first chunk at once (an idle socket), full frames, a tail
    let arrived = true;
    const audio$ = new Observable<Uint8Array>((subscriber) => {
      let stopped = false;
      void (async () => {
        // Wait for the socket to open, so the burst meets an open socket.
        while (stats.status !== 'streaming' && !stopped) await new Promise((r) => setTimeout(r, 5));
        for (let i = 0; i < burst && !stopped; i++) subscriber.next(chunk(i, size));
        const all = new Promise<boolean>((resolve) => {
          const check = setInterval(() => {
            if (srv.frames.reduce((n, f) => n + f.length, 0) >= burst * size) {
              clearInterval(check);
              clearTimeout(limit);
              resolve(true);
            }
          }, 5);
          const limit = setTimeout(() => {
            clearInterval(check);
            resolve(false);
          }, 2_000);
        });
        arrived = await all;
        if (!stopped) subscriber.complete();
      })();
      return () => {
        stopped = true;
      };
    });
    const stats = createSessionStats();
    await lastValueFrom(audio$.pipe(analyzeConversation({ reconnect, apiKey: KEY, baseUrl: srv.baseUrl, stats, format: RAW })));
    expect(arrived).toBe(true);
    expect(Buffer.concat(srv.frames).equals(Buffer.concat(Array.from({ length: burst }, (_, i) => chunk(i, size))))).toBe(true);
    // Full frames in between: at most the first chunk (at once), one frame to the end of the log's block, and the tail are short.
    expect(srv.frames.length).toBeLessThanOrEqual(7);
    expect(srv.frames.at(-1)!.length).toBeLessThan(64 * 1024);
  });

  it.each([
    ['reconnect: false', false],
    ['the default (reconnect on)', undefined],
  ] as const)('sends each chunk at once on an idle socket (%s): it arrives before the next chunk is read', async (_, reconnect) => {
    const srv = await server();
    const count = 20;
    const size = 160;
    let arrivedEach = true;
    const audio$ = new Observable<Uint8Array>((subscriber) => {
      let stopped = false;
      void (async () => {
        for (let i = 0; i < count && !stopped; i++) {
          subscriber.next(chunk(i, size));
          // Nothing else is read until this chunk reached the server: a held chunk would never arrive.
          const arrived = await Promise.race([srv.frameArrived(i + 1).then(() => true), new Promise<boolean>((r) => setTimeout(() => r(false), 2_000))]);
          if (!arrived) arrivedEach = false;
        }
        if (!stopped) subscriber.complete();
      })();
      return () => {
        stopped = true;
      };
    });
    const stats = createSessionStats();
    // Wait for the socket to open so every chunk meets an idle socket, not the connect queue.
    const opened = new Observable<Uint8Array>((subscriber) => {
      const wait = setInterval(() => {
        if (stats.status === 'streaming') {
          clearInterval(wait);
          audio$.subscribe(subscriber);
        }
      }, 5);
      return () => clearInterval(wait);
    });
    await lastValueFrom(opened.pipe(analyzeConversation({ reconnect, apiKey: KEY, baseUrl: srv.baseUrl, stats, format: RAW })));
    expect(arrivedEach).toBe(true);
    expect(srv.frames.length).toBe(count);
    srv.frames.forEach((f, i) => expect(f.equals(Buffer.from(chunk(i, size)))).toBe(true));
    expect(stats.framesSent).toBe(count);
  });

  it('keeps the account exact when the connection is lost mid-stream while chunks are held', async () => {
    const srv = await server(256 * 1024);
    const size = 160;
    let read = 0;
    async function* frames(): AsyncGenerator<Uint8Array> {
      for (let i = 0; ; i++) {
        read += size;
        yield chunk(i, size);
      }
    }
    const stats: SessionStats = createSessionStats();
    const err = await lastValueFrom(fromAsyncIterable(frames(), { format: RAW }).pipe(analyzeConversation({ reconnect: false, apiKey: KEY, baseUrl: srv.baseUrl, stats }))).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(SessionError);
    const audio = (err as SessionError).audio!;
    // Every byte the source yielded was read, and is sent or unsent; nothing counted twice.
    expect(audio.read).toBe(read);
    expect(audio.read).toBe(stats.bytesRead);
    expect(audio.sent).toBe(stats.bytesSent);
    expect(audio.unsent).toBe(audio.read - audio.sent);
    expect(audio.unsent).toBeGreaterThan(0);
    // What the server got is a prefix of what was read, and no more than what was counted sent.
    const received = Buffer.concat(srv.frames);
    expect(received.length).toBeGreaterThanOrEqual(256 * 1024);
    expect(received.length).toBeLessThanOrEqual(audio.sent);
    // Chunks were coalesced on the way (so the account covered held chunks too).
    expect(srv.frames.length).toBeLessThan(received.length / size);
    const chunks: Uint8Array[] = [];
    for (let i = 0; i * size < received.length; i++) chunks.push(chunk(i, size));
    const expected = Buffer.concat(chunks).subarray(0, received.length);
    expect(received.equals(expected)).toBe(true);
  }, 20_000);
});
