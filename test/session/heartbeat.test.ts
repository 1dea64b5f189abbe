// Dead-connection detection, on virtual time: the heartbeat module, and on real sockets a
// silent peer (the emulator's `silence` fault, a TCP proxy that blackholes both directions)
// ends the session in a retryable `heartbeat_timeout` in every phase, with nothing left over.
import { afterEach, describe, expect, it } from 'vitest';
import { Observable, VirtualTimeScheduler } from 'rxjs';
import { analyzeConversation, createSessionStats, fromAsyncIterable, type ServerEvent, type SessionStats, type SvcError } from 'svc-stream';
import { startEmulator, type RunningEmulator, type ScenarioInput } from 'svc-stream/emulator';
import { Heartbeat, resolveHeartbeat } from '../../src/session/heartbeat.js';
import { startTcpProxy } from '../internal/tcpProxy.js';
import { virtualTime } from '../internal/virtualTime.js';

const KEY = 'sk-heartbeat-0001';
const RAW = { audio_format: 's16le', sample_rate: 16000, num_channels: 1 } as const;
const HEARTBEAT = { intervalMs: 100, timeoutMs: 400 } as const;

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function emulator(scenario: ScenarioInput = {}): Promise<RunningEmulator> {
  const emu = await startEmulator({ apiKey: KEY, scenario });
  cleanups.push(() => emu.close());
  return emu;
}

/** A live source: a 20 ms frame (640 bytes of s16le 16 kHz) every 20 ms, until unsubscribed or `frames` sent. */
function live20ms(frames = Infinity): Observable<Uint8Array> {
  return new Observable<Uint8Array>((s) => {
    let n = 0;
    const t = setInterval(() => {
      s.next(new Uint8Array(640));
      if (++n >= frames) {
        clearInterval(t);
        s.complete();
      }
    }, 20);
    return () => clearInterval(t);
  });
}

interface Ended {
  readonly error?: SvcError | undefined;
  readonly events: ServerEvent[];
  readonly states: string[];
}

/** A session whose timers run on virtual time: the test moves the clock once the connection is silent. */
function run(audio$: Observable<Uint8Array>, options: Parameters<typeof analyzeConversation>[0]): { ended: Promise<Ended>; states: string[]; stats: SessionStats; silent(): void } {
  const events: ServerEvent[] = [];
  const states: string[] = [];
  const stats = createSessionStats();
  const time = virtualTime();
  const ended = new Promise<Ended>((resolve) => {
    const sub = audio$
      .pipe(analyzeConversation({ apiKey: KEY, format: RAW, heartbeat: HEARTBEAT, reconnect: false, scheduler: time.scheduler, stats, ...options, onStateChange: (old, s) => (states.push(s.status), options?.onStateChange?.(old, s)) }))
      .subscribe({ next: (e) => events.push(e), error: (error: unknown) => resolve({ error: error as SvcError, events, states }), complete: () => resolve({ events, states }) });
    cleanups.push(() => sub.unsubscribe());
  });
  // Nothing comes in while the clock moves past the heartbeat's deadline: a ping goes, no pong can.
  return { ended, states, stats, silent: () => time.advance(HEARTBEAT.timeoutMs + HEARTBEAT.intervalMs) };
}

describe('Heartbeat (virtual time)', () => {
  it('pings after intervalMs of silence, once per interval; inbound traffic resets the clock; dead at timeoutMs', () => {
    const scheduler = new VirtualTimeScheduler();
    const pings: number[] = [];
    let deadAt: number | undefined;
    const hb = new Heartbeat({ intervalMs: 100, timeoutMs: 400 }, scheduler, () => pings.push(scheduler.now()), () => (deadAt = scheduler.now()));
    scheduler.maxFrames = 250;
    scheduler.flush();
    expect(pings).toEqual([100, 200]);
    const touchedAt = scheduler.now();
    hb.touch();
    scheduler.maxFrames = 1_000;
    scheduler.flush();
    expect(deadAt).toBeDefined();
    expect(deadAt! - touchedAt).toBeGreaterThanOrEqual(400);
    expect(deadAt! - touchedAt).toBeLessThanOrEqual(400 + 100);
    expect(pings.filter((p) => p > touchedAt).length).toBeGreaterThan(0);
    expect(scheduler.actions).toHaveLength(0); // stopped itself
  });

  it('resolves the option: defaults 5 s / 15 s, false turns it off, a bad value is invalid_argument', () => {
    expect(resolveHeartbeat(undefined)).toEqual({ intervalMs: 5_000, timeoutMs: 15_000 });
    expect(resolveHeartbeat(false)).toBeUndefined();
    expect(() => resolveHeartbeat({ intervalMs: 0 })).toThrow(expect.objectContaining({ code: 'invalid_argument' }));
  });
});

describe('a silent connection ends in heartbeat_timeout, whatever the phase (virtual time)', () => {
  it('streaming (a live 20 ms source), the server silent (no read, no write, no FIN)', async () => {
    const emu = await emulator({ faults: [{ at: 'audio', at_ms: 200, action: 'silence' }] });
    const r = run(live20ms(), { baseUrl: emu.baseUrl });
    // The server falls silent once it has 200 ms of audio.
    await expect.poll(() => r.stats.bytesSent).toBeGreaterThanOrEqual(300 * 32);
    r.silent();
    const out = await r.ended;
    expect(out.error?.code).toBe('heartbeat_timeout');
    expect(out.error?.retryable).toBe(true);
    expect(out.states.at(-1)).toBe('failed');
    const a = out.error!.audio!;
    expect(a.read).toBe(a.sent + a.unsent);
  });

  it('streaming through a TCP proxy that blackholes both directions', async () => {
    const emu = await emulator();
    const proxy = await startTcpProxy(emu.port);
    cleanups.push(() => proxy.close());
    const r = run(live20ms(), { baseUrl: proxy.baseUrl });
    await expect.poll(() => r.stats.bytesSent).toBeGreaterThan(0);
    proxy.setMode('blackhole');
    await expect.poll(() => proxy.swallowed()).toBeGreaterThan(0);
    r.silent();
    expect((await r.ended).error?.code).toBe('heartbeat_timeout');
  });

  it('paused (a pull source held back by backpressure) through a blackholing proxy', async () => {
    const emu = await emulator();
    const proxy = await startTcpProxy(emu.port);
    cleanups.push(() => proxy.close());
    async function* chunks(): AsyncGenerator<Uint8Array> {
      for (let i = 0; i < 10_000; i++) yield new Uint8Array(32_000);
    }
    let blackholed = false;
    const r = run(fromAsyncIterable(chunks(), { format: RAW }), {
      baseUrl: proxy.baseUrl,
      highWaterMark: 64_000,
      onStateChange: (_, s) => {
        if (s.status === 'streaming' && !blackholed) {
          blackholed = true;
          proxy.setMode('blackhole');
        }
      },
    });
    await expect.poll(() => blackholed && r.states.includes('paused')).toBe(true);
    r.silent();
    const out = await r.ended;
    expect(out.states).toContain('paused');
    expect(out.error?.code).toBe('heartbeat_timeout');
  });

  it('finishing (end of audio sent, the server silent before done)', async () => {
    const emu = await emulator({ faults: [{ at: 'end', action: 'silence' }] });
    const r = run(live20ms(10), { baseUrl: emu.baseUrl });
    await expect.poll(() => r.stats.status).toBe('finishing');
    r.silent();
    const out = await r.ended;
    expect(out.states).toContain('finishing');
    expect(out.error?.code).toBe('heartbeat_timeout');
  });

  it('after done, a peer that dies before its close still completes (the results are complete)', async () => {
    const emu = await emulator({ faults: [{ at: 'done', action: 'silence' }] });
    const r = run(live20ms(10), { baseUrl: emu.baseUrl, closeTimeoutMs: 60_000 });
    await expect.poll(() => r.stats.status).toBe('closing');
    r.silent();
    const out = await r.ended;
    expect(out.error).toBeUndefined();
    expect(out.events.at(-1)?.type).toBe('done');
  });
});
