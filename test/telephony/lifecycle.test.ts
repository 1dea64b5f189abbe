// The call servers on the life cycle's seam, in one process: draining, a new RTP leg and a new
// media stream are refused their way (counted, told once) while the calls in flight end done;
// forced, each call in flight ends `shutdown` with its audio accounted; the diagnostics channels
// tell a user who does not run the CLI.
import diagnosticsChannel from 'node:diagnostics_channel';
import { Subject, type Subscription } from 'rxjs';
import { afterEach, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { startEmulator, type RunningEmulator } from '../../src/emulator/index.js';
import {
  analyzeCalls,
  createAnalyzeCallsStats,
  createMediaStreamServerStats,
  createRtpSourceStats,
  DIAGNOSTICS_CHANNELS,
  mediaStreamServer,
  rtpSource,
  ServiceLifecycle,
  type CallOutcome,
  type LimitWarning,
} from 'svc-stream/telephony';
import { rtpCall } from '../cli/rtpTestKit.js';

let emu: RunningEmulator | undefined;
const subs: Subscription[] = [];
afterEach(async () => {
  subs.splice(0).forEach((s) => s.unsubscribe());
  await emu?.close();
  emu = undefined;
});

describe('rtpSource and analyzeCalls on a ServiceLifecycle', () => {
  it('draining: a new leg is refused (counted, told once), the calls in flight end done, then stopped; the channels tell each start and end', async () => {
    emu = await startEmulator({ organizations: [{ keys: ['k'], concurrency: 10 }] });
    const lifecycle = new ServiceLifecycle({ drainTimeoutMs: 20_000 });
    const warnings: LimitWarning[] = [];
    const stats = createRtpSourceStats();
    const callStats = createAnalyzeCallsStats();
    const port = new Subject<number>();
    const seen: string[] = [];
    const onStart = (m: unknown): void => void seen.push(`start ${(m as { id: string }).id}`);
    const onEnd = (m: unknown): void => void seen.push(`end ${(m as { id: string }).id} ${(m as { outcome: string }).outcome}`);
    diagnosticsChannel.subscribe(DIAGNOSTICS_CHANNELS.callStart, onStart);
    diagnosticsChannel.subscribe(DIAGNOSTICS_CHANNELS.callEnd, onEnd);
    const outcomes: CallOutcome[] = [];
    const p = new Promise<number>((r) => port.subscribe(r));
    subs.push(
      analyzeCalls(rtpSource({ lifecycle, stats, idleTimeoutMs: 300, onListening: (a) => port.next(a.port), onWarning: (w) => void warnings.push(w as LimitWarning) }), {
        apiKey: 'k',
        baseUrl: emu.baseUrl,
        maxConcurrent: 10,
        lifecycle,
        callStats,
      }).subscribe((call) => call.outcome$.subscribe((o) => outcomes.push(o))),
    );
    const rtp = await p;
    expect(lifecycle.state.status).toBe('ready');
    let stop = false;
    const inFlight = [rtpCall(rtp, 0xa1, () => stop), rtpCall(rtp, 0xa2, () => stop)];
    await expect.poll(() => callStats.running, { timeout: 10_000 }).toBe(2);
    lifecycle.drain('signal');
    expect(lifecycle.readiness).toEqual({ ready: false, reason: 'draining' });
    // A call that starts now is refused: its packets dropped and counted, said once.
    await rtpCall(rtp, 0xb1, 10, 5);
    stop = true;
    await Promise.all(inFlight);
    const stopped = await lifecycle.whenStopped();
    diagnosticsChannel.unsubscribe(DIAGNOSTICS_CHANNELS.callStart, onStart);
    diagnosticsChannel.unsubscribe(DIAGNOSTICS_CHANNELS.callEnd, onEnd);
    expect(stopped).toEqual({ status: 'stopped', reason: 'signal', forced: false });
    expect(outcomes.map((o) => o.status)).toEqual(['done', 'done']);
    expect(stats.refusedDraining).toBe(10);
    expect(warnings.map((w) => w.code)).toEqual(['draining']);
    expect(callStats).toMatchObject({ calls: 2, done: 2, failed: 0, shutdown: 0 });
    expect(seen.sort()).toEqual(['end rtp-000000a1 done', 'end rtp-000000a2 done', 'start rtp-000000a1', 'start rtp-000000a2']);
  }, 30_000);

  it('forced: every call in flight ends shutdown, with its audio account; the source lets its legs go', async () => {
    emu = await startEmulator({ organizations: [{ keys: ['k'], concurrency: 10 }] });
    const lifecycle = new ServiceLifecycle({ drainTimeoutMs: 200 });
    const callStats = createAnalyzeCallsStats();
    const port = new Subject<number>();
    const outcomes: CallOutcome[] = [];
    const p = new Promise<number>((r) => port.subscribe(r));
    subs.push(
      analyzeCalls(rtpSource({ lifecycle, idleTimeoutMs: 300, onListening: (a) => port.next(a.port) }), { apiKey: 'k', baseUrl: emu.baseUrl, lifecycle, callStats }).subscribe((call) =>
        call.outcome$.subscribe((o) => outcomes.push(o)),
      ),
    );
    const rtp = await p;
    let stop = false;
    const calls = [rtpCall(rtp, 0xc1, () => stop), rtpCall(rtp, 0xc2, () => stop)];
    await expect.poll(() => callStats.running, { timeout: 10_000 }).toBe(2);
    lifecycle.drain('signal'); // the calls go on past the 200 ms deadline
    const stopped = await lifecycle.whenStopped();
    stop = true;
    await Promise.all(calls);
    expect(stopped).toEqual({ status: 'stopped', reason: 'signal', forced: true });
    expect(outcomes.map((o) => [o.status, (o.error as { code?: string }).code])).toEqual([
      ['error', 'shutdown'],
      ['error', 'shutdown'],
    ]);
    const audio = (outcomes[0]!.error as { audio?: { read: number; sent: number; unsent: number } }).audio!;
    expect(audio.read).toBeGreaterThan(0);
    expect(audio.read).toBe(audio.sent + audio.unsent);
    expect(callStats).toMatchObject({ calls: 2, shutdown: 2, failed: 0, done: 0, running: 0 });
  }, 30_000);
});

describe('mediaStreamServer on a ServiceLifecycle', () => {
  it('draining: an upgrade is answered 503 with Retry-After before it is a WebSocket, counted and told once', async () => {
    const lifecycle = new ServiceLifecycle();
    const stats = createMediaStreamServerStats();
    const warnings: string[] = [];
    const port = new Promise<number>((resolve) => subs.push(mediaStreamServer({ lifecycle, stats, onListening: (a) => resolve(a.port), onWarning: (w) => void warnings.push(w.code) }).subscribe()));
    const url = `ws://127.0.0.1:${await port}/`;
    expect(lifecycle.state.status).toBe('ready');
    const open = new WebSocket(url);
    await new Promise((resolve) => open.once('open', resolve));
    lifecycle.drain('signal', Infinity);
    const refused = await Promise.all(
      [1, 2].map(
        () =>
          new Promise<{ status: number; retry: string | undefined }>((resolve) => {
            const ws = new WebSocket(url);
            ws.once('unexpected-response', (_req, res) => resolve({ status: res.statusCode ?? 0, retry: res.headers['retry-after'] as string | undefined }));
            ws.once('error', () => undefined);
          }),
      ),
    );
    expect(refused).toEqual([
      { status: 503, retry: '5' },
      { status: 503, retry: '5' },
    ]);
    expect(stats.refusedDraining).toBe(2);
    expect(warnings).toEqual(['draining']);
    // The connection open before the drain goes on; when it closes, the service stops.
    expect(lifecycle.state.status).toBe('draining');
    open.close();
    await lifecycle.whenStopped();
  });
});
