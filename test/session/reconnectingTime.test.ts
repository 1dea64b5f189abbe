// Time spent reconnecting, against an independent record of the same run, on an injected clock:
// a real session on the emulator behind a proxy, its timers on virtual time moved by the test.
// The test's own record says when the service went away (the proxy cut and refusing) and when
// it came back; the session's figure must be that outage within the reconnect's own delay, the
// attempts refused on the way included, and stop at the first frame sent again. Then the audio
// account of the run adds up (sent once = read - dropped, the replay counted once).
import { readFileSync } from 'node:fs';
import { Observable } from 'rxjs';
import { afterEach, describe, expect, it } from 'vitest';
import { analyzeConversation, createSessionStats, sessionFigures, type SvcError } from 'svc-stream';
import { startEmulator } from 'svc-stream/emulator';
import { startTcpProxy } from '../internal/tcpProxy.js';
import { virtualTime } from '../internal/virtualTime.js';
import { watchLoop } from '../faults/loopStall.js';

const KEY = 'sk-reconnecting-0001';
const RAW = { audio_format: 's16le', sample_rate: 16000, num_channels: 1 } as const;
const WAV = readFileSync(new URL('../../samples/call.wav', import.meta.url));
/** 8 s of the sample call, raw s16le 16 kHz mono. */
const PCM = WAV.subarray(44, 44 + 8 * 32_000);
const STEP_MS = 50;
const MAX_DELAY_MS = 800;

const cleanups: Array<() => Promise<unknown> | void> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

async function until(what: () => boolean, label: string): Promise<void> {
  await expect.poll(what, { timeout: 20_000, interval: 5, message: `never: ${label}` }).toBe(true);
}

describe('time spent reconnecting, on an injected clock', () => {
  it.each([2_000, 7_200])('an outage of %i ms reads as that outage, within the reconnect delay; the audio adds up', async (outageMs) => {
    const emu = await startEmulator({ apiKey: KEY });
    cleanups.push(() => emu.close());
    const loop = watchLoop();
    const proxy = await startTcpProxy(emu.port);
    cleanups.push(() => proxy.close());
    const time = virtualTime();
    let push: ((chunk: Uint8Array) => void) | undefined;
    let end: (() => void) | undefined;
    const audio$ = new Observable<Uint8Array>((s) => {
      push = (c) => s.next(c);
      end = () => s.complete();
    });
    const stats = createSessionStats();
    const done = new Promise<SvcError | undefined>((resolve) => {
      const sub = audio$
        .pipe(
          analyzeConversation({
            apiKey: KEY,
            baseUrl: proxy.baseUrl,
            format: RAW,
            stats,
            scheduler: time.scheduler,
            // On virtual time no pong can keep pace with the clock the test moves; the proxy's cut is seen at once.
            heartbeat: false,
            connectTimeoutMs: 600_000,
            reconnect: { initialDelayMs: 100, maxDelayMs: MAX_DELAY_MS, jitter: 0, maxAttempts: 1_000, deadlineMs: 600_000 },
          }),
        )
        .subscribe({ error: (err: unknown) => resolve(err as SvcError), complete: () => resolve(undefined) });
      cleanups.push(() => sub.unsubscribe());
    });
    const half = 4 * 32_000;
    for (let at = 0; at < half; at += 640) push!(PCM.subarray(at, at + 640));
    await until(() => stats.bytesSent === half && stats.eventsReceived > 0, 'the first half sent and answered');
    time.advance(4_000);

    // The record: the service goes away now, and comes back `outageMs` later on the same clock.
    const wentAway = time.scheduler.now();
    proxy.setMode('refuse');
    proxy.reset();
    await until(() => stats.status === 'reconnecting', 'reconnecting');
    let refused = 0;
    stats.state$.subscribe((s) => s.status === 'reconnecting' && refused++);
    while (time.scheduler.now() < wentAway + outageMs) {
      time.advance(STEP_MS);
      await sleep(8);
      // The outage is counted as it runs: the figures see it before it ends.
      expect(sessionFigures({ stats, format: RAW, startedAt: 0, now: time.scheduler.now() }).reconnectingMs).toBe(time.scheduler.now() - wentAway);
    }
    const cameBack = time.scheduler.now();
    proxy.setMode('forward');
    while (stats.reconnectingSince !== undefined) {
      time.advance(STEP_MS);
      await sleep(8);
      if (time.scheduler.now() > cameBack + 10 * MAX_DELAY_MS) throw new Error('the outage never ended');
    }
    // Several attempts were refused while away: the time counts from the first failure, not the last.
    expect(refused).toBeGreaterThan(3);
    expect(stats.reconnects).toBe(1);
    expect(stats.reconnectingMs).toBeGreaterThanOrEqual(outageMs);
    expect(stats.reconnectingMs).toBeLessThanOrEqual(outageMs + MAX_DELAY_MS + STEP_MS);

    for (let at = half; at < PCM.length; at += 640) push!(PCM.subarray(at, at + 640));
    end!();
    // Timers (the done timeout, uptime) wait on the clock: move it until the stream completes.
    let settled: SvcError | undefined | 'pending' = 'pending';
    void done.then((e) => (settled = e));
    while (settled === 'pending') {
      time.advance(STEP_MS);
      await sleep(8);
    }
    expect(settled).toBeUndefined();
    const f = sessionFigures({ stats, format: RAW, durationMs: 8_000, startedAt: 0, now: time.scheduler.now() });
    expect(f.reconnectingMs).toBe(stats.reconnectingMs);
    expect(f.bytes.read).toBe(PCM.length);
    expect(f.bytes.sent).toBe(f.bytes.read - f.bytes.dropped);
    // What the server received: every byte once, and the replay once more (two sessions: the refused attempts never reached it).
    await until(() => emu.connections.length === 2, 'both sessions ended on the server');
    const received = emu.connections.reduce((n, c) => n + c.bytesReceived, 0);
    expect(received).toBe(f.bytes.sent + f.bytes.replayed);
    expect(f.positionMs).toBe(8_000);
    // The event loop: never held more than 100 ms with the main thread busy (the emulator runs here too).
    const stalls = loop.stop();
    expect(stalls.busiestMs, `longest gap ${stalls.longestMs.toFixed(0)} ms`).toBeLessThanOrEqual(100);
  }, 60_000);
});
