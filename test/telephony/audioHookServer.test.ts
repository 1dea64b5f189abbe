// The AudioHook server over real sockets on loopback: a scripted client (test/telephony/
// audioHookPeer.ts) plays Genesys, message by message; the calls go through analyzeCalls to
// the emulator.
import { readFileSync } from 'node:fs';
import { request } from 'node:http';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { firstValueFrom, Subject, VirtualTimeScheduler, type Subscription } from 'rxjs';
import { afterEach, describe, expect, it } from 'vitest';
import { analyzeCalls, audioHookServer, audioHookSignatureHeaders, createAudioHookServerStats, type AudioHookCall, type AudioHookNotice, type AudioHookServerOptions } from 'svc-stream/telephony';
import type { LimitWarning } from 'svc-stream';
import { startEmulator, type RunningEmulator } from '../../src/emulator/index.js';
import { collectBytes, SAMPLE_MULAW } from './helpers.js';
import { connectPeer, interleave, ORG, type Peer } from './audioHookPeer.js';

const MULAW = readFileSync(SAMPLE_MULAW);
const SESSION = '30b0e395-84d3-4570-ac13-9a62d8f514c0';
const KEY = 'test-key';
const SECRET = Buffer.from('a client secret of 32 bytes, ok!').toString('base64');

const subs: Subscription[] = [];
const peers: Peer[] = [];
let emu: RunningEmulator | undefined;
afterEach(async () => {
  for (const p of peers.splice(0)) p.ws.terminate();
  subs.splice(0).forEach((s) => s.unsubscribe());
  await emu?.close();
  emu = undefined;
});

/** A server on a free port: its calls in order, its notices, its stats. */
async function serve(options: AudioHookServerOptions = {}) {
  const stats = createAudioHookServerStats();
  const calls: AudioHookCall[] = [];
  const notices: Array<{ notice: AudioHookNotice; id: string | undefined }> = [];
  const waiters: Array<(c: AudioHookCall) => void> = [];
  const calls$ = new Subject<AudioHookCall>();
  let port!: (p: number) => void;
  const listening = new Promise<number>((r) => (port = r));
  let completed = false;
  subs.push(
    audioHookServer({ stats, ...options, onListening: (a) => port(a.port), onNotice: (notice, id) => notices.push({ notice, id }) }).subscribe({
      next: (c) => {
        calls.push(c);
        waiters.shift()?.(c);
        calls$.next(c);
      },
      complete: () => (completed = true),
    }),
  );
  const p = await listening;
  let taken = 0;
  return {
    url: `ws://127.0.0.1:${p}/audiohook`,
    port: p,
    stats,
    calls,
    calls$,
    notices,
    get completed() {
      return completed;
    },
    next: (): Promise<AudioHookCall> => {
      const i = taken++;
      return calls[i] ? Promise.resolve(calls[i]!) : new Promise((r) => waiters.push(r));
    },
  };
}

async function peer(url: string, options: Parameters<typeof connectPeer>[1] = { sessionId: SESSION }): Promise<Peer> {
  const p = await connectPeer(url, options);
  peers.push(p);
  return p;
}

/** A client whose session is opened (the standard offer), and the server's call of it. */
async function openedCall(s: Awaited<ReturnType<typeof serve>>): Promise<{ c: Peer; call: AudioHookCall }> {
  const c = await peer(s.url);
  c.open();
  await c.next();
  return { c, call: await s.next() };
}

/** The sample call as the customer's side, its next second as the agent's: `ms` of stereo PCMU from `at` ms. */
function stereo(atMs: number, ms: number): Uint8Array {
  const n = ms * 8;
  const from = atMs * 8;
  return interleave(MULAW.subarray(from, from + n), MULAW.subarray(from + 8000, from + 8000 + n));
}

describe('audioHookServer: the full message sequence over a real socket', () => {
  it('open, both channels, ping, a pause and its resume, update, close: one stereo call analysed, its gap filled and said', async () => {
    emu = await startEmulator({ organizations: [{ keys: ['k'], concurrency: 5 }] });
    const s = await serve({ path: '/audiohook' });
    const outcome = new Subject<{ status: string; duration: number | null }>();
    // The server's calls through the library's one path for calls: one session each.
    subs.push(analyzeCalls(s.calls$, { apiKey: 'k', baseUrl: emu.baseUrl }).subscribe((a) => a.outcome$.subscribe((o) => outcome.next({ status: o.status, duration: o.snapshot.aggregates.audioDurationMs }))));
    const ended = firstValueFrom(outcome);

    const c = await peer(s.url);
    c.open();
    const opened = await c.next();
    expect(opened).toEqual({
      version: '2',
      id: SESSION,
      type: 'opened',
      seq: 1,
      clientseq: 1,
      parameters: { media: [{ type: 'audio', format: 'PCMU', channels: ['external', 'internal'], rate: 8000 }], startPaused: false },
    });
    const call = await s.next();
    expect(call).toMatchObject({
      id: SESSION,
      conversationId: '090eaa2f-72fa-480a-83e0-8667ff89c0ec',
      organizationId: 'd7934305-0972-4844-938e-9060eef73d05',
      correlationId: 'e160e428-53e2-487c-977d-96989bf5c99d',
      participant: { ani: '+1-555-555-1234', aniName: 'John Doe', dnis: '+1-800-555-6789' },
      language: 'en-US',
      customConfig: { campaign: 'renewals' },
      channels: ['external', 'internal'],
      format: { audio_format: 'mulaw', sample_rate: 8000, num_channels: 2 },
    });
    const audio = collectBytes(call.audio$);

    // 2 s of audio in 200 ms frames, as Genesys sends them.
    for (let ms = 0; ms < 2000; ms += 200) c.audio(stereo(ms, 200));
    c.send('ping', {});
    expect(await c.next()).toMatchObject({ type: 'pong', seq: 2, clientseq: 2 });
    c.send('paused', {});
    const pausedAt = c.position;
    c.samples += 1.5 * 8000; // the client's position runs on while it sends nothing
    c.send('resumed', { start: pausedAt, discarded: 'PT1.5S' });
    for (let ms = 2000; ms < 3000; ms += 200) c.audio(stereo(ms, 200));
    c.send('update', { language: 'fr-FR' });
    expect(await c.next()).toMatchObject({ type: 'updated', seq: 3, clientseq: 5 });
    c.send('close', { reason: 'end' });
    expect(await c.next()).toMatchObject({ type: 'closed', seq: 4, clientseq: 6, parameters: {} });
    c.ws.close();

    // The call's audio: external on channel 1, internal on channel 2, the pause as 1.5 s of silence.
    const bytes = await audio;
    const expected = Buffer.concat([stereo(0, 2000), Buffer.alloc(1.5 * 16_000, 0xff), stereo(2000, 1000)]);
    expect(bytes.byteLength).toBe(expected.byteLength);
    expect(Buffer.from(bytes).equals(expected)).toBe(true);
    expect(call.gaps).toEqual([{ cause: 'paused', atMs: 2000, durationMs: 1500, filled: true }]);
    expect(call.stats).toEqual({ frames: 15, bytes: 48_000, pauses: 1, pausedMs: 1500, discards: 0, discardedMs: 0, filledMs: 1500 });
    expect(call.language).toBe('fr-FR');
    expect(call.end).toEqual({ how: 'closed', reason: 'end' });
    expect(s.notices.map((n) => n.notice.type)).toEqual(['paused', 'resumed', 'update', 'ended']);
    // One session through the library's path: the stereo call analysed to its end, 4.5 s long.
    expect(await ended).toEqual({ status: 'done', duration: 4500 });
    expect(s.stats).toMatchObject({ connections: 1, calls: 1, closed: 1, disconnected: 0, lost: 0, audioFrames: 15, pauses: 1, pausedMs: 1500, filledMs: 1500 });
    expect(await c.closed).toBe(1005);
  }, 20_000);
});

describe('audioHookServer: media', () => {
  it('both sides offered internal first: returned as offered, and the call still has external on channel 1', async () => {
    const s = await serve();
    const c = await peer(s.url);
    const offer = { type: 'audio', format: 'PCMU', channels: ['internal', 'external'], rate: 8000 };
    c.open([offer]);
    expect((await c.next()).parameters).toEqual({ media: [offer], startPaused: false });
    const call = await s.next();
    expect(call.channels).toEqual(['external', 'internal']);
    const audio = collectBytes(call.audio$);
    // The client's frames: internal, external, internal, external …
    c.audio(interleave(Buffer.alloc(800, 0x11), Buffer.alloc(800, 0x22)));
    c.send('close', { reason: 'end' });
    await c.next();
    expect([...(await audio).subarray(0, 4)]).toEqual([0x22, 0x11, 0x22, 0x11]);
  });

  it('L16 offered first is taken as s16le; one side alone makes a one-channel call', async () => {
    const s = await serve();
    const c = await peer(s.url);
    c.open([{ type: 'audio', format: 'L16', channels: ['external', 'internal'], rate: 8000 }]);
    await c.next();
    expect((await s.next()).format).toEqual({ audio_format: 's16le', sample_rate: 8000, num_channels: 2 });
    const d = await peer(s.url, { sessionId: '41b0e395-84d3-4570-ac13-9a62d8f514c1' });
    d.open([{ type: 'audio', format: 'PCMU', channels: ['internal'], rate: 8000 }]);
    await d.next();
    const mono = await s.next();
    expect(mono.format).toEqual({ audio_format: 'mulaw', sample_rate: 8000, num_channels: 1 });
    expect(mono.channels).toEqual(['internal']);
  });

  it('a connection probe (the null conversation) is answered opened and makes no call; opened, it is not cut by the open timeout', async () => {
    const s = await serve({ openTimeoutMs: 30 });
    const c = await peer(s.url);
    c.open(undefined, '00000000-0000-0000-0000-000000000000');
    expect(await c.next()).toMatchObject({ type: 'opened', parameters: { media: [{ channels: ['external', 'internal'] }] } });
    await settle();
    c.send('close', { reason: 'end' });
    expect(await c.next()).toMatchObject({ type: 'closed' });
    c.ws.close();
    await c.closed;
    expect(s.calls).toEqual([]);
    expect(s.stats).toMatchObject({ probes: 1, calls: 0, closed: 1 });
  });
});

describe('audioHookServer: protocol errors end the session with disconnect', () => {
  it('a sequence gap: disconnect (error), the call ends with what came, the client closes, closed, the socket goes', async () => {
    const s = await serve();
    const { c, call } = await openedCall(s);
    const audio = collectBytes(call.audio$);
    c.audio(stereo(0, 200));
    c.seq++; // a message lost: the next one skips a number
    c.send('ping', {});
    expect(await c.next()).toMatchObject({ type: 'disconnect', seq: 2, parameters: { reason: 'error', info: 'seq 3 where 2 was due' } });
    expect((await audio).byteLength).toBe(3200);
    expect(call.end).toEqual({ how: 'disconnected', reason: 'error', info: 'seq 3 where 2 was due' });
    c.send('close', { reason: 'disconnect' });
    expect(await c.next()).toMatchObject({ type: 'closed', seq: 3 });
    c.ws.close();
    await c.closed;
    expect(s.stats).toMatchObject({ disconnected: 1, closed: 0, lost: 0 });
  });

  it('hostile input: a 100 KiB text message, a client that never opens, one that never closes: each bounded, the loop never held', async () => {
    const delay = monitorEventLoopDelay({ resolution: 10 });
    delay.enable();
    const s = await serve({ openTimeoutMs: 100, closeTimeoutMs: 100 });
    // Over 64 KiB: the protocol's refusal (disconnect), not a dropped socket.
    const big = await peer(s.url);
    big.open();
    await big.next();
    big.send('update', { language: 'x'.repeat(100_000) });
    expect(await big.next()).toMatchObject({ type: 'disconnect', parameters: { reason: 'error', info: expect.stringMatching(/bytes \(at most 65535\)$/) } });
    // It never sends close: the socket is closed after closeTimeoutMs.
    expect(await big.closed).toBe(1000);
    // Never opens: disconnect after openTimeoutMs, then the socket.
    const idle = await peer(s.url, { sessionId: '41b0e395-84d3-4570-ac13-9a62d8f514c1' });
    expect(await idle.next()).toMatchObject({ type: 'disconnect', parameters: { reason: 'error', info: 'no open message in time' } });
    expect(await idle.closed).toBe(1000);
    // Audio before open.
    const early = await peer(s.url, { sessionId: '52b0e395-84d3-4570-ac13-9a62d8f514c2' });
    early.audio(new Uint8Array(320));
    expect(await early.next()).toMatchObject({ type: 'disconnect', parameters: { info: 'audio in state awaiting-open (binary audio only while active)' } });
    // Over maxPayload (256 KiB): refused at its header with 1009.
    const huge = await peer(s.url, { sessionId: '63b0e395-84d3-4570-ac13-9a62d8f514c3' });
    huge.audio(new Uint8Array(300 * 1024));
    expect(await huge.closed).toBe(1009);
    await until(() => s.stats.lost === 1);
    delay.disable();
    expect(delay.max / 1e6).toBeLessThan(100);
    expect(s.stats).toMatchObject({ disconnected: 3, oversized: 1, lost: 1 });
  }, 20_000);
});

describe('audioHookServer: who may connect, and how many', () => {
  it('a bad signature is answered 401 no sooner than 500 ms after the request (virtual time); a good one is taken at once; a replay is refused', async () => {
    const scheduler = new VirtualTimeScheduler(undefined, Infinity);
    const refused: string[] = [];
    const s = await serve({ scheduler, frameMs: 0, authenticate: { apiKeys: { [KEY]: SECRET } }, onRefused: (f) => refused.push(f.reason) });
    // The virtual clock starts at 0: the signature is dated on it.
    const headers = audioHookSignatureHeaders({ url: s.url, apiKey: KEY, clientSecret: SECRET, organizationId: ORG, sessionId: SESSION, correlationId: 'e160e428-53e2-487c-977d-96989bf5c99d', created: 0 });
    const good = await peer(s.url, { sessionId: SESSION, headers });
    good.open();
    expect(await good.next()).toMatchObject({ type: 'opened' });

    let answered: number | undefined;
    const bad = connectPeer(s.url, { sessionId: '41b0e395-84d3-4570-ac13-9a62d8f514c1', apiKey: KEY, clientSecret: Buffer.from('wrong').toString('base64'), created: 0 }).catch((err: { status: number }) => {
      answered = err.status;
      return err;
    });
    // Decided (counted, told), but not answered: the answer waits on the scheduler.
    await until(() => refused.length === 1);
    scheduler.maxFrames = 499;
    scheduler.flush();
    await settle();
    expect(answered).toBeUndefined();
    scheduler.maxFrames = 500;
    scheduler.flush();
    expect(await bad).toMatchObject({ status: 401 });

    // The good request's headers again: its nonce is spent.
    const replay = connectPeer(s.url, { sessionId: SESSION, headers }).catch((err: { status: number }) => err);
    await until(() => refused.length === 2);
    scheduler.maxFrames = 1000;
    scheduler.flush();
    expect(await replay).toMatchObject({ status: 401 });
    expect(refused).toEqual(['bad_signature', 'replayed_nonce']);
    expect(s.stats.unauthorized).toBe(2);
  });

  it('over maxConnections: 503 with Retry-After before the upgrade, said once; a session id already open: 409', async () => {
    const warnings: LimitWarning[] = [];
    const s = await serve({ maxConnections: 1, onWarning: (w) => warnings.push(w) });
    await peer(s.url);
    await expect(connectPeer(s.url, { sessionId: '41b0e395-84d3-4570-ac13-9a62d8f514c1' })).rejects.toMatchObject({ status: 503, headers: { 'retry-after': '5' } });
    await expect(connectPeer(s.url, { sessionId: '52b0e395-84d3-4570-ac13-9a62d8f514c2' })).rejects.toMatchObject({ status: 503 });
    expect(warnings).toEqual([expect.objectContaining({ code: 'max_connections', option: 'maxConnections', limit: 1 })]);
    expect(s.stats.overCapacity).toBe(2);
    const t = await serve();
    const first = await peer(t.url);
    first.open();
    await first.next();
    await expect(connectPeer(t.url, { sessionId: SESSION })).rejects.toMatchObject({ status: 409 });
    expect(t.stats.duplicateSessions).toBe(1);
  });

  it('a plain HTTP request is answered 426, another path 404', async () => {
    const s = await serve({ path: '/audiohook' });
    const status = await new Promise<number>((resolve, reject) => {
      request(`http://127.0.0.1:${s.port}/audiohook`, (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      })
        .on('error', reject)
        .end();
    });
    expect(status).toBe(426);
    await expect(connectPeer(`ws://127.0.0.1:${s.port}/elsewhere`, { sessionId: SESSION })).rejects.toMatchObject({ status: 404 });
  });
});

describe('audioHookServer: drain and shutdown', () => {
  it('a drain: new sessions answered 503, live ones asked to reconnect; it completes when the last session ends', async () => {
    const drain = new Subject<void>();
    const s = await serve({ drain });
    const { c, call } = await openedCall(s);
    drain.next();
    expect(await c.next()).toMatchObject({ type: 'reconnect', seq: 2, parameters: { info: expect.stringMatching(/draining/) } });
    await expect(connectPeer(s.url, { sessionId: '41b0e395-84d3-4570-ac13-9a62d8f514c1' })).rejects.toMatchObject({ status: 503, headers: { 'retry-after': '5' } });
    expect(s.completed).toBe(false);
    // The client reconnects elsewhere: it closes this session with reason reconnect.
    c.send('close', { reason: 'reconnect' });
    expect(await c.next()).toMatchObject({ type: 'closed' });
    c.ws.close();
    await c.closed;
    await until(() => s.completed);
    expect(call.end).toEqual({ how: 'closed', reason: 'reconnect' });
    expect(s.stats).toMatchObject({ reconnectsAsked: 1, refusedDraining: 1 });
  });

  it('unsubscribing ends every live session with disconnect, then the socket', async () => {
    const s = await serve();
    const { c, call } = await openedCall(s);
    const audio = collectBytes(call.audio$);
    c.audio(stereo(0, 200));
    await until(() => call.stats.frames === 1);
    subs.splice(0).forEach((sub) => sub.unsubscribe());
    expect(await c.next()).toMatchObject({ type: 'disconnect', parameters: { reason: 'error', info: 'the server is shutting down' } });
    expect(await c.closed).toBe(1001);
    expect((await audio).byteLength).toBe(3200);
  });
});

/** Wait for `cond` (bounded). */
async function until(cond: () => boolean, ms = 15_000): Promise<void> {
  await expect.poll(cond, { timeout: ms, interval: 5, message: 'condition not met in time' }).toBe(true);
}

/** Let pending I/O run (a few turns of the loop). */
async function settle(): Promise<void> {
  for (let i = 0; i < 5; i++) await new Promise((r) => setTimeout(r, 10));
}
