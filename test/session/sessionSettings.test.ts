// The options read once (src/session/sessionSettings.ts): the settings object as a table of
// what each option becomes, the one place an option in error is reported, and over real sockets
// a reconnect that reuses the settings it started with (the environment is not read again; a key
// function is asked once per connection).
import { readFileSync } from 'node:fs';
import { asyncScheduler } from 'rxjs';
import { afterEach, describe, expect, it } from 'vitest';
import { analyzeConversation, createSessionStats, fromAsyncIterable, InputError, type SessionEvent, type SvcError } from 'svc-stream';
import { startEmulator, type ScenarioInput } from 'svc-stream/emulator';
import { resolveSessionSettings, SESSION_DEFAULTS } from '../../src/session/sessionSettings.js';
import { DEFAULT_RECONNECT } from '../../src/session/reconnect.js';

const KEY = 'sk-settings-0001';
const RAW = { audio_format: 's16le', sample_rate: 16000, num_channels: 1 } as const;
const ENDPOINT = { path: '/api/svc-2-streaming', configFrame: 'default' };
const ENV = { SVC_API_KEY: 'sk-from-env', SVC_BASE_URL: 'http://127.0.0.1:1' };
/** 6 s of the sample call, raw s16le 16 kHz mono. */
const PCM = readFileSync(new URL('../../samples/call.wav', import.meta.url)).subarray(44, 44 + 6 * 32_000);

const cleanups: Array<() => Promise<unknown> | void> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

describe('resolveSessionSettings', () => {
  it('reads every option (and the environment) once into one frozen object, defaults filled in', () => {
    const s = resolveSessionSettings({ format: RAW, heartbeat: { intervalMs: 100 } }, ENDPOINT, undefined, ENV);
    expect(Object.isFrozen(s)).toBe(true);
    expect(s).toMatchObject({
      path: ENDPOINT.path,
      configFrame: 'default',
      apiKey: 'sk-from-env',
      baseUrl: 'http://127.0.0.1:1',
      format: RAW,
      query: { audio_format: 's16le', sample_rate: '16000', num_channels: '1' },
      heartbeat: { intervalMs: 100, timeoutMs: 15_000 },
      reconnect: DEFAULT_RECONNECT,
      connectTimeoutMs: SESSION_DEFAULTS.connectTimeoutMs,
      closeTimeoutMs: SESSION_DEFAULTS.closeTimeoutMs,
      highWaterMark: SESSION_DEFAULTS.highWaterMark,
      scheduler: asyncScheduler,
      strict: false,
    });
    // The option wins over the environment; the source's format when no option gives one.
    expect(resolveSessionSettings({ apiKey: 'sk-option' }, ENDPOINT, RAW, ENV)).toMatchObject({ apiKey: 'sk-option', format: RAW });
    expect(resolveSessionSettings({ reconnect: false, heartbeat: false }, ENDPOINT, undefined, ENV)).toMatchObject({ reconnect: undefined, heartbeat: undefined });
    const key = (): string => 'sk-fn';
    expect(resolveSessionSettings({ apiKey: key }, ENDPOINT, undefined, ENV).apiKey).toMatchObject({ ask: key });
  });

  it.each([
    ['no base URL', {}, {}, 'baseUrl'],
    ['no key', {}, { SVC_BASE_URL: 'http://x' }, 'apiKey'],
    ['a raw format without its rate', { format: { audio_format: 's16le' } }, ENV, 'sample_rate'],
    ['a bad heartbeat', { heartbeat: { intervalMs: 0 } }, ENV, 'heartbeat'],
    ['a bad reconnect policy', { reconnect: { jitter: 2 } }, ENV, 'reconnect.jitter'],
    ['a deadline that is no positive number', { closeTimeoutMs: -1 }, ENV, 'closeTimeoutMs'],
  ] as const)('%s: the InputError naming it, from the one place', (_name, options, env, path) => {
    let thrown: unknown;
    try {
      resolveSessionSettings(options as never, ENDPOINT, undefined, env);
    } catch (err) {
      thrown = err;
    }
    expect(thrown).toBeInstanceOf(InputError);
    expect((thrown as InputError).path).toBe(path);
  });

  it('an option in error fails the subscription and shows in the stats, before anything connects', async () => {
    const stats = createSessionStats();
    async function* one(): AsyncGenerator<Uint8Array> {
      yield new Uint8Array(640);
    }
    const err = await new Promise<unknown>((resolve) =>
      fromAsyncIterable(one(), { format: RAW })
        .pipe(analyzeConversation({ apiKey: KEY, baseUrl: 'http://127.0.0.1:1', stats, reconnect: { maxAttempts: 1.5 } }))
        .subscribe({ error: resolve, complete: () => resolve(undefined) }),
    );
    expect(err).toBeInstanceOf(InputError);
    expect(stats.status).toBe('failed');
    expect(stats.bytesRead).toBe(0);
  });
});

describe('a reconnect reuses the settings it started with', () => {
  /** A pull source of PCM, and an emulator that drops the first connection 2 s into the audio. */
  async function droppedOnce(): Promise<{ baseUrl: string; connections: () => number }> {
    let n = 0;
    const emu = await startEmulator({ apiKey: KEY, scenario: (): ScenarioInput => (n++ === 0 ? { faults: [{ at: 'audio', at_ms: 2_000, action: 'drop' }] } : {}) });
    cleanups.push(() => emu.close());
    return { baseUrl: emu.baseUrl, connections: () => emu.connections.length };
  }

  function run(options: Parameters<typeof analyzeConversation>[0]): Promise<{ events: SessionEvent[]; error?: SvcError; reconnects: number }> {
    const stats = createSessionStats();
    const events: SessionEvent[] = [];
    async function* memory(): AsyncGenerator<Uint8Array> {
      for (let at = 0; at < PCM.length; at += 16_000) yield PCM.subarray(at, at + 16_000);
    }
    return new Promise((resolve) => {
      const sub = fromAsyncIterable(memory(), { format: RAW })
        .pipe(analyzeConversation({ ...options, stats, reconnect: { initialDelayMs: 1 } }))
        .subscribe({
          next: (e) => events.push(e),
          error: (error: unknown) => resolve({ events, error: error as SvcError, reconnects: stats.reconnects }),
          complete: () => resolve({ events, reconnects: stats.reconnects }),
        });
      cleanups.push(() => sub.unsubscribe());
    });
  }

  it('SVC_API_KEY changed mid-session: the reconnected session uses the key the session started with', async () => {
    const server = await droppedOnce();
    const before = { key: process.env['SVC_API_KEY'], url: process.env['SVC_BASE_URL'] };
    cleanups.push(() => {
      for (const [name, value] of [['SVC_API_KEY', before.key], ['SVC_BASE_URL', before.url]] as const) {
        if (value === undefined) delete process.env[name];
        else process.env[name] = value;
      }
    });
    process.env['SVC_API_KEY'] = KEY;
    process.env['SVC_BASE_URL'] = server.baseUrl;
    const r = run({
      onStateChange: (_old, next) => {
        // Once the first session is streaming, the environment changes under it: a key the emulator refuses.
        if (next.status === 'streaming') process.env['SVC_API_KEY'] = 'sk-rotated-elsewhere';
      },
    });
    const out = await r;
    expect(out.error, String(out.error)).toBeUndefined();
    expect(out.reconnects).toBe(1);
    expect(out.events.at(-1)).toMatchObject({ type: 'done', segment: 1 });
    expect(process.env['SVC_API_KEY']).toBe('sk-rotated-elsewhere');
  });

  it('a key function is asked once per connection, and each connection uses its answer', async () => {
    const server = await droppedOnce();
    const asked: number[] = [];
    const out = await run({
      baseUrl: server.baseUrl,
      apiKey: async () => {
        asked.push(asked.length + 1);
        return KEY;
      },
    });
    expect(out.error, String(out.error)).toBeUndefined();
    expect(out.reconnects).toBe(1);
    expect(asked).toEqual([1, 2]);
    await expect.poll(() => server.connections()).toBe(2);
  });

  it('a key function that fails is a connection that could not be made (and said without the key)', async () => {
    async function* one(): AsyncGenerator<Uint8Array> {
      yield new Uint8Array(640);
    }
    const err = await new Promise<SvcError>((resolve) =>
      fromAsyncIterable(one(), { format: RAW })
        .pipe(analyzeConversation({ baseUrl: 'http://127.0.0.1:1', apiKey: () => Promise.reject(new Error('token service down')) }))
        .subscribe({ error: (e: unknown) => resolve(e as SvcError) }),
    );
    expect(err.code).toBe('connection_failed');
    expect(err.message).toContain('token service down');
  });
});
