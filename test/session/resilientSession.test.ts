// The resilient layer over real sockets (src/session/resilientSession.ts), its timers on
// virtual time (the backoff, the outage's deadline, the uptime that proves a session): servers
// that lose every session young (dropped, closed with 1001 or 1011 at its first audio), a first
// session that opens paused and fails, a throwing onStateChange, and a connection reset with
// refused attempts before the server is back: the final error, the audio account and the
// figures (segment, reconnects, bytesReplayed against what the server received twice).
import type { AddressInfo } from 'node:net';
import { readFileSync } from 'node:fs';
import { config as rxConfig, Observable } from 'rxjs';
import { WebSocketServer } from 'ws';
import { afterEach, describe, expect, it } from 'vitest';
import { analyzeConversation, createSessionStats, fromAsyncIterable, SessionError, type SessionEvent, type SessionStats, type SvcError } from 'svc-stream';
import { startEmulator, type ScenarioInput } from 'svc-stream/emulator';
import { startTcpProxy } from '../internal/tcpProxy.js';
import { virtualTime } from '../internal/virtualTime.js';

const KEY = 'sk-resilient-0001';
const RAW = { audio_format: 's16le', sample_rate: 16000, num_channels: 1 } as const;
const WAV = readFileSync(new URL('../../samples/call.wav', import.meta.url));
/** 8 s of the sample call, raw s16le 16 kHz mono: a few utterances. */
const PCM = WAV.subarray(44, 44 + 8 * 32_000);

const cleanups: Array<() => Promise<unknown> | void> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/** A live source: 20 ms frames of `pcm` (or silence for ever), one every `everyMs`. */
function live(pcm: Uint8Array | undefined, everyMs = 5): Observable<Uint8Array> {
  return new Observable<Uint8Array>((s) => {
    let at = 0;
    const t = setInterval(() => {
      if (pcm !== undefined && at >= pcm.length) {
        clearInterval(t);
        s.complete();
        return;
      }
      s.next(pcm === undefined ? new Uint8Array(640) : pcm.subarray(at, at + 640));
      at += 640;
    }, everyMs);
    return () => clearInterval(t);
  });
}

interface Outcome {
  readonly events: SessionEvent[];
  readonly statuses: string[];
  readonly stats: SessionStats;
  readonly error?: SvcError | undefined;
}

/**
 * One session on virtual time: each `reconnecting` moves the clock on by `backoffMs` (the
 * backoff's fixed delay, no jitter), once the state is told, so the next attempt starts.
 */
function run(audio$: Observable<Uint8Array>, options: Parameters<typeof analyzeConversation>[0], backoffMs = 500): Promise<Outcome> {
  const stats = createSessionStats();
  const events: SessionEvent[] = [];
  const statuses: string[] = [];
  const time = virtualTime();
  stats.state$.subscribe((s) => {
    statuses.push(s.status);
    if (s.status === 'reconnecting') setImmediate(() => time.advance(backoffMs));
  });
  return new Promise((resolve) => {
    const sub = audio$.pipe(analyzeConversation({ apiKey: KEY, format: RAW, scheduler: time.scheduler, ...options, stats })).subscribe({
      next: (e) => events.push(e),
      error: (error: unknown) => resolve({ events, statuses, stats, error: error as SvcError }),
      complete: () => resolve({ events, statuses, stats }),
    });
    cleanups.push(() => sub.unsubscribe());
  });
}

/** A ws server that loses every session: `fault` strikes at the first audio frame the session sends. */
async function losingServer(fault: 'drop' | 1001 | 1011): Promise<{ baseUrl: string; opened: () => number; received: () => number }> {
  const wss = new WebSocketServer({ host: '127.0.0.1', port: 0 });
  await new Promise<void>((r) => wss.once('listening', r));
  let opened = 0;
  let received = 0;
  wss.on('connection', (ws) => {
    opened++;
    let struck = false;
    ws.on('message', (data, isBinary) => {
      if (!isBinary) return;
      received += (data as Buffer).length;
      if (struck) return;
      struck = true;
      if (fault === 'drop') ws.terminate();
      else {
        // Every close but 1000 comes after an error event (§6): not progress either.
        ws.send(JSON.stringify({ type: 'error', error: fault === 1001 ? 'Service shutting down.' : 'Internal server error' }));
        ws.close(fault);
      }
    });
  });
  cleanups.push(
    () =>
      new Promise<void>((r) => {
        for (const c of wss.clients) c.terminate();
        wss.close(() => r());
      }),
  );
  return { baseUrl: `http://127.0.0.1:${(wss.address() as AddressInfo).port}`, opened: () => opened, received: () => received };
}

describe('a server that loses every session young', () => {
  it.each([
    ['dropped at its first audio', 'drop', 'connection_lost'],
    ['closed with 1001 at its first audio', 1001, 'service_restart'],
    ['closed with 1011 at its first audio', 1011, 'internal_error'],
  ] as const)('%s: a typed error once the 4 s deadline ran out (virtual time), and figures that add up', async (_name, fault, code) => {
    const server = await losingServer(fault);
    // A live push source of silence: it keeps coming through the outage, bounded by the windows.
    // Each outage waits 500 ms of virtual time: the 4 s deadline runs out after the eighth.
    const r = await run(live(undefined, 5), { baseUrl: server.baseUrl, reconnect: { deadlineMs: 4_000, maxAttempts: 100, initialDelayMs: 500, maxDelayMs: 500, jitter: 0 } });
    expect(r.error).toBeInstanceOf(SessionError);
    expect(r.error!.code).toBe(code);
    // Sessions that die young are no progress: the outage's deadline, not the attempts (100), ended it.
    const opened = server.opened();
    expect(opened).toBe(9);
    expect(r.statuses.filter((s) => s === 'reconnecting')).toHaveLength(opened - 1);
    // Every session that opened is a segment and a reconnect; no failed attempt is.
    expect(r.stats.segment).toBe(opened - 1);
    expect(r.stats.reconnects).toBe(opened - 1);
    const audio = r.error!.audio!;
    expect(audio.read).toBe(r.stats.bytesRead);
    expect(audio.read).toBe(audio.sent + audio.unsent);
    expect(audio.sent).toBe(r.stats.bytesSent - r.stats.bytesReplayed);
    expect(r.stats.bytesDropped).toBeLessThanOrEqual(audio.unsent);
    expect(r.stats.bytesDropped).toBe(audio.unsent);
    // The server got no more than was flushed to it, and what was sent twice went to sessions that opened.
    expect(server.received()).toBeLessThanOrEqual(r.stats.bytesSent);
    expect(r.stats.bytesReplayed).toBeLessThanOrEqual(r.stats.bytesSent);
  }, 30_000);
});

describe('the first session', () => {
  it('opens paused (its queue over the high-water mark) and fails before it drained: reconnected, one conversation', async () => {
    let n = 0;
    const emu = await startEmulator({ apiKey: KEY, scenario: (): ScenarioInput => (n++ === 0 ? { faults: [{ at: 'handshake', action: 'drop' }] } : {}) });
    cleanups.push(() => emu.close());
    // A pull source read in memory: 4 MiB wait before the handshake completes.
    async function* memory(): AsyncGenerator<Uint8Array> {
      for (let at = 0; at < PCM.length; at += 32_000) yield PCM.subarray(at, at + 32_000);
    }
    const r = await run(fromAsyncIterable(memory(), { format: RAW }), { baseUrl: emu.baseUrl, highWaterMark: 64 * 1024, reconnect: { initialDelayMs: 20, jitter: 0 } }, 20);
    expect(r.error, String(r.error)).toBeUndefined();
    expect(r.statuses.slice(0, 3)).toEqual(['connecting', 'paused', 'closing']);
    expect(r.statuses).toContain('reconnecting');
    expect(r.stats.reconnects).toBe(1);
    expect(r.stats.bytesRead).toBe(PCM.length);
    expect(r.events.at(-1)).toMatchObject({ type: 'done', segment: 1 });
  });
});

describe('user callbacks', () => {
  it('a throwing onStateChange changes nothing: reported once, the stream reconnects and completes', async () => {
    let n = 0;
    const emu = await startEmulator({ apiKey: KEY, scenario: (): ScenarioInput => (n++ === 0 ? { faults: [{ at: 'audio', at_ms: 2_000, action: 'drop' }] } : {}) });
    cleanups.push(() => emu.close());
    const reported: unknown[] = [];
    const before = rxConfig.onUnhandledError;
    rxConfig.onUnhandledError = (err) => reported.push(err);
    cleanups.push(() => {
      rxConfig.onUnhandledError = before;
    });
    const boom = new Error('observer broke');
    const r = await run(live(PCM, 2), {
      baseUrl: emu.baseUrl,
      reconnect: { initialDelayMs: 20, jitter: 0 },
      onStateChange: (_old, next) => {
        if (next.status === 'reconnecting') throw boom;
      },
    });
    expect(r.error, String(r.error)).toBeUndefined();
    expect(r.stats.reconnects).toBe(1);
    expect(r.statuses.at(-1)).toBe('done');
    // Reported as RxJS reports an unhandled error: on a later turn.
    await expect.poll(() => reported).toEqual([boom]);
  });
});

describe('a connection reset, with refused attempts before the server is back', () => {
  it('the events after the reconnect carry segment 1, and bytesReplayed is exactly what the server received twice', async () => {
    const emu = await startEmulator({ apiKey: KEY });
    cleanups.push(() => emu.close());
    const proxy = await startTcpProxy(emu.port);
    cleanups.push(() => proxy.close());
    // A live source the test drives: speech, then a pause before the reset so nothing is in flight.
    let push: ((chunk: Uint8Array) => void) | undefined;
    let end: (() => void) | undefined;
    const audio$ = new Observable<Uint8Array>((s) => {
      push = (c) => s.next(c);
      end = () => s.complete();
    });
    const reasons: string[] = [];
    const stats = createSessionStats();
    const events: SessionEvent[] = [];
    const time = virtualTime();
    const done = new Promise<SvcError | undefined>((resolve) => {
      const sub = audio$.pipe(analyzeConversation({ apiKey: KEY, baseUrl: proxy.baseUrl, format: RAW, stats, scheduler: time.scheduler, reconnect: { initialDelayMs: 50, maxDelayMs: 100, maxAttempts: 50 } })).subscribe({
        next: (e) => events.push(e),
        error: (err: unknown) => resolve(err as SvcError),
        complete: () => resolve(undefined),
      });
      cleanups.push(() => sub.unsubscribe());
    });
    stats.state$.subscribe((s) => {
      if (s.status !== 'reconnecting') return;
      reasons.push((s.error as SvcError).code);
      // The backoff runs on virtual time: the next attempt starts once the state is told.
      setImmediate(() => time.advance(100));
    });
    const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
    const half = 4 * 32_000;
    for (let at = 0; at < half; at += 640) {
      push!(PCM.subarray(at, at + 640));
      await sleep(1);
    }
    // Everything flushed has reached the server before the break.
    await sleep(300);
    proxy.setMode('refuse');
    proxy.reset();
    // Several attempts refused (the server is down), then it is back.
    await expect.poll(() => reasons.length, { timeout: 10_000 }).toBeGreaterThanOrEqual(3);
    proxy.setMode('forward');
    for (let at = half; at < PCM.length; at += 640) {
      push!(PCM.subarray(at, at + 640));
      await sleep(1);
    }
    end!();
    expect(await done).toBeUndefined();
    expect(reasons[0]).toBe('connection_lost');
    expect(reasons.slice(1).every((c) => c === 'connection_failed')).toBe(true);
    // The attempts that never connected are no segment: the one session that opened is segment 1.
    expect(stats.segment).toBe(1);
    const after = events.filter((e) => e.segment !== undefined);
    expect(after.length).toBeGreaterThan(0);
    expect(after.every((e) => e.segment === 1)).toBe(true);
    expect(stats.reconnects).toBe(1);
    await expect.poll(() => emu.connections.length).toBe(2);
    const received = emu.connections.reduce((sum, c) => sum + c.bytesReceived, 0);
    expect(emu.connections).toHaveLength(2);
    expect(stats.bytesReplayed).toBeGreaterThan(0);
    expect(stats.bytesReplayed).toBe(received - PCM.length);
    expect(stats.bytesRead).toBe(PCM.length);
    expect(stats.bytesDropped).toBe(0);
  }, 30_000);
});
