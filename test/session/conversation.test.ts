// The session operator over real loopback sockets against the emulator: every state and
// move of §3, each close code, handshake rejection, faults, teardown and key redaction.
// (Sessions here run with `reconnect: false`: each test is about one session; reconnecting has its own, test/session/reconnect.test.ts.)
import { createServer, type Server } from 'node:net';
import { readFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { firstValueFrom, from, lastValueFrom, Observable, Subject, throwError, concat, toArray, take, filter, timer, mergeMap, VirtualTimeScheduler } from 'rxjs';
import WebSocket from 'ws';
import { analyzeConversation, ContractError, createSessionStats, FlowControl, InputError, SessionError, SvcError, type ServerEvent } from 'svc-stream';
import { withAudioMeta } from '../../src/audio/meta.js';
import { startEmulator, type RunningEmulator, type ScenarioInput, type OrganizationSpec } from 'svc-stream/emulator';

const KEY = 'sk-test-7f3a9c1e-secret';
const CALL = readFileSync(new URL('../../samples/call.wav', import.meta.url));
const RAW = { audio_format: 's16le', sample_rate: 16000, num_channels: 1 } as const;

let emulators: RunningEmulator[] = [];
afterEach(async () => {
  await Promise.all(emulators.map((e) => e.close()));
  emulators = [];
});

async function emulator(scenario: ScenarioInput = {}, organizations?: OrganizationSpec[]): Promise<RunningEmulator> {
  const emu = await startEmulator({ apiKey: KEY, scenario, ...(organizations ? { organizations } : {}) });
  emulators.push(emu);
  return emu;
}

/** `n` chunks of 100 ms of s16le silence at 16 kHz. */
function pcm(n: number, bytes = 3200): Uint8Array[] {
  return Array.from({ length: n }, () => new Uint8Array(bytes));
}

function wavChunks(size = 32_000): Uint8Array[] {
  const out: Uint8Array[] = [];
  for (let i = 0; i < CALL.length; i += size) out.push(CALL.subarray(i, i + size));
  return out;
}

async function failure(obs: Observable<ServerEvent>): Promise<{ events: ServerEvent[]; error: SvcError }> {
  const events: ServerEvent[] = [];
  return new Promise((resolve, reject) => {
    obs.subscribe({
      next: (e) => events.push(e),
      error: (error: unknown) => resolve({ events, error: error as SvcError }),
      complete: () => reject(new Error(`expected an error, completed after ${events.map((e) => e.type).join(',')}`)),
    });
  });
}

async function waitFor(cond: () => boolean, ms = 3000): Promise<void> {
  await expect.poll(cond, { timeout: ms, interval: 10 }).toBe(true);
}

const clip = (id: string, at_ms: number) => ({
  at_ms,
  event: { type: 'clip', clip: { clip_uuid: id, text: `clip ${id}`, start_ms: Math.max(0, at_ms - 500), duration_ms: 500, speaker_label: '1', language: 'en', emotion: null, accent: null, deepfake_score: null } },
});

describe('analyzeConversation: the happy path (§3 streaming → finishing → done → 1000)', () => {
  it('sends one config frame, the audio, the end frame, emits events in order and completes after done', async () => {
    const emu = await emulator({
      steps: [
        { at_ms: 0, event: { type: 'partial_clip', partial_clip: { clip_uuid: 'a', text: 'hel', start_ms: 0, end_ms: 300, speaker_label: null, emotion: null, accent: null, deepfake_score: null } } },
        clip('a', 1000),
        { after_end: true, event: { type: 'summary', text: 'A short call.' } },
      ],
    });
    const stats = createSessionStats();
    const events = await lastValueFrom(from(wavChunks()).pipe(analyzeConversation({ reconnect: false, apiKey: KEY, baseUrl: emu.baseUrl, stats }), toArray()));
    expect(events.map((e) => e.type)).toEqual(['partial_clip', 'clip', 'summary', 'done']);
    const done = events.at(-1)!;
    expect(done).toEqual({ type: 'done', duration_ms: 38507 });
    expect(stats.bytesSent).toBe(CALL.length);
    expect(stats.bytesRead).toBe(CALL.length);
    expect(stats.status).toBe('done');
    await waitFor(() => emu.connections.length === 1);
    expect(emu.connections[0]).toMatchObject({ config: 'default', bytesReceived: CALL.length, closeCode: 1000 });
  });

  it('sends a validated BatchConfig as JSON, and raw parameters in the query', async () => {
    const emu = await emulator();
    const config = { produce_summary: false, stt: { emotion_signal: true, custom_terms: ['Northwind'] } };
    const events = await lastValueFrom(
      from(pcm(10)).pipe(analyzeConversation({ reconnect: false, apiKey: KEY, baseUrl: emu.baseUrl, config, format: RAW }), toArray()),
    );
    expect(events).toEqual([{ type: 'done', duration_ms: 1000 }]);
    await waitFor(() => emu.connections.length === 1);
    expect(JSON.parse(emu.connections[0]!.config!)).toEqual(config);
  });

  it('takes the format from an audio source that carries it', async () => {
    const emu = await emulator();
    // 0xFF is mu-law silence (0x00 is full scale), so the emulator's voice detection finds nothing.
    const silence = Array.from({ length: 5 }, () => new Uint8Array(800).fill(0xff));
    const source = withAudioMeta(from(silence), { format: { audio_format: 'mulaw', sample_rate: 8000, num_channels: 1 } });
    const events = await lastValueFrom(source.pipe(analyzeConversation({ reconnect: false, apiKey: KEY, baseUrl: emu.baseUrl }), toArray()));
    expect(events).toEqual([{ type: 'done', duration_ms: 500 }]);
  });

  it('ends an empty audio stream cleanly with done 0', async () => {
    const emu = await emulator();
    const events = await lastValueFrom(from([] as Uint8Array[]).pipe(analyzeConversation({ reconnect: false, apiKey: KEY, baseUrl: emu.baseUrl, format: RAW }), toArray()));
    expect(events).toEqual([{ type: 'done', duration_ms: 0 }]);
  });

  it('passes unknown event types through and normalises the flat form', async () => {
    const emu = await emulator({
      steps: [
        { event: { type: 'sentiment_trend', trend: 'up' } },
        { event: { type: 'participant_role', speaker_label: '1', participant_role_uuid: 'r1', name: 'Agent', confidence: 0.9, selection_source: 'inferred', detail: null, reasoning: null, extra: 7 } },
      ],
    });
    const events = await lastValueFrom(from(pcm(2)).pipe(analyzeConversation({ reconnect: false, apiKey: KEY, baseUrl: emu.baseUrl, format: RAW }), toArray()));
    expect(events[0]).toEqual({ type: 'unknown', event_type: 'sentiment_trend', data: { trend: 'up' } });
    expect(events[1]).toMatchObject({ type: 'participant_role', pick: { speaker_label: '1', name: 'Agent', extra: 7 } });
  });

  it('keeps emitting events that arrive after the end of audio, until done', async () => {
    const emu = await emulator({
      steps: [
        { after_end: true, event: { type: 'behavior_detection', detection: { behavior_uuid: 'b', behavior_name: 'Empathy', speaker_label: '1', detected: true, confidence: 0.8, evidence_clip_uuids: [], definitive_clip_uuid: null, reasoning: null } } },
        { after_end: true, event: { type: 'topics', topics: ['billing'] } },
      ],
    });
    const events = await lastValueFrom(from(pcm(3)).pipe(analyzeConversation({ reconnect: false, apiKey: KEY, baseUrl: emu.baseUrl, format: RAW }), toArray()));
    expect(events.map((e) => e.type)).toEqual(['behavior_detection', 'topics', 'done']);
  });
});

describe('analyzeConversation: refused locally before connecting', () => {
  it('an invalid config is an InputError naming the path, and no connection is made', async () => {
    const emu = await emulator();
    const config = { stt: { custom_terms: [{ term: '' }] } };
    const { error } = await failure(from(pcm(1)).pipe(analyzeConversation({ reconnect: false, apiKey: KEY, baseUrl: emu.baseUrl, config, format: RAW })));
    expect(error).toBeInstanceOf(InputError);
    expect(error.code).toBe('invalid_config');
    expect((error as InputError).path).toBe('stt.custom_terms.0.term');
    expect(emu.connections).toHaveLength(0);
  });

  it.each([
    [{ audio_format: 's16le' }, 'sample_rate'],
    [{ audio_format: 'opus' }, 'audio_format'],
    [{ audio_format: 's16le', sample_rate: 50000, num_channels: 1 }, 'sample_rate'],
    [{ audio_format: 's16le', sample_rate: 16000, num_channels: 9 }, 'num_channels'],
  ])('audio parameters %j are refused at %s', async (format, path) => {
    const emu = await emulator();
    // Every socket the session would open goes through its factory: none made, none can connect later.
    let sockets = 0;
    const webSocketFactory = (url: string, options: WebSocket.ClientOptions): WebSocket => (sockets++, new WebSocket(url, options));
    const { error } = await failure(from(pcm(1)).pipe(analyzeConversation({ reconnect: false, apiKey: KEY, baseUrl: emu.baseUrl, format: format as never, webSocketFactory })));
    expect(error.code).toBe('invalid_audio_params');
    expect((error as InputError).path).toBe(path);
    expect(sockets).toBe(0);
    expect(emu.connections).toHaveLength(0);
    expect(emu.accounts.organizations[0]!.peakInFlight.conversation).toBe(0);
  });

  it("'opus' is refused with the hint to pass 'ogg'", async () => {
    const { error } = await failure(from(pcm(1)).pipe(analyzeConversation({ reconnect: false, apiKey: KEY, baseUrl: 'http://127.0.0.1:9', format: { audio_format: 'opus' } as never })));
    expect(error.message).toContain("'ogg'");
  });

  it('a missing base URL or key is an InputError', async () => {
    const { error } = await failure(from(pcm(1)).pipe(analyzeConversation({ reconnect: false, apiKey: KEY, baseUrl: undefined as never })));
    expect(['invalid_argument']).toContain(error.code);
  });
});

describe('analyzeConversation: close codes (§7.3) map to typed errors', () => {
  it.each([
    [1003, 'Invalid configuration.', 'invalid_config', false],
    [1003, null, 'protocol_error', false],
    [1011, 'Internal server error', 'internal_error', true],
    [1011, null, 'internal_error', true],
    [4001, 'Invalid API key.', 'invalid_api_key', false],
    [4002, 'Invalid input audio', 'invalid_audio', false],
    [4003, 'This API key does not have access to this model.', 'no_model_access', false],
    [4029, 'Insufficient credits.', 'insufficient_credits', false],
    [4029, 'Monthly usage limit reached.', 'monthly_usage_limit', false],
    [4030, 'Concurrent connection limit reached.', 'concurrency_limit', true],
    [4031, 'Limit exceeded', 'limit_exceeded', false],
    [4999, 'Something new', 'unexpected_close', false],
  ] as const)('close %i after error %j → %s (retryable %s)', async (code, error, expected, retryable) => {
    const emu = await emulator({ faults: [{ at: 'config', action: 'close', code, error }] });
    const r = await failure(from(pcm(3)).pipe(analyzeConversation({ reconnect: false, apiKey: KEY, baseUrl: emu.baseUrl, format: RAW })));
    expect(r.error).toBeInstanceOf(SessionError);
    expect(r.error.code).toBe(expected);
    expect(r.error.closeCode).toBe(code);
    expect(r.error.retryable).toBe(retryable);
    if (error !== null) {
      expect(r.events).toEqual([{ type: 'error', error }]);
      expect(r.error.detail).toBe(error);
    }
  });

  it('a normal close before done is missing_done, with the audio accounted for', async () => {
    const emu = await emulator({ faults: [{ at: 'audio', at_ms: 200, action: 'close', code: 1000, error: null }] });
    const r = await failure(from(pcm(50)).pipe(analyzeConversation({ reconnect: false, apiKey: KEY, baseUrl: emu.baseUrl, format: RAW })));
    expect(r.error.code).toBe('missing_done');
    expect(r.error.audio!.read).toBe(r.error.audio!.sent + r.error.audio!.unsent);
  });
});

describe('analyzeConversation: the handshake (§5.1, §7.3)', () => {
  it('an invalid key closes with 4001 and an error event', async () => {
    const emu = await emulator();
    const r = await failure(from(pcm(1)).pipe(analyzeConversation({ reconnect: false, apiKey: 'sk-wrong-key-0000', baseUrl: emu.baseUrl, format: RAW })));
    expect(r.error.code).toBe('invalid_api_key');
    expect(r.error.closeCode).toBe(4001);
    expect(r.events).toEqual([{ type: 'error', error: 'Invalid API key.' }]);
  });

  it('a key without model access closes with 4003', async () => {
    const emu = await emulator({}, [{ keys: [KEY], models: ['emotion'] }]);
    const r = await failure(from(pcm(1)).pipe(analyzeConversation({ reconnect: false, apiKey: KEY, baseUrl: emu.baseUrl, format: RAW })));
    expect(r.error.code).toBe('no_model_access');
    expect(r.error.closeCode).toBe(4003);
  });

  it('a connection over the concurrency limit closes with 4030 and is retryable', async () => {
    const emu = await emulator({}, [{ keys: [KEY], concurrency: 1 }]);
    const hold = new Subject<Uint8Array>();
    const first = hold.pipe(analyzeConversation({ reconnect: false, apiKey: KEY, baseUrl: emu.baseUrl, format: RAW })).subscribe({ error: () => undefined });
    await waitFor(() => emu.accounts.organizations[0]!.inFlight.conversation === 1);
    const r = await failure(from(pcm(1)).pipe(analyzeConversation({ reconnect: false, apiKey: KEY, baseUrl: emu.baseUrl, format: RAW })));
    expect(r.error.code).toBe('concurrency_limit');
    expect(r.error.closeCode).toBe(4030);
    expect(r.error.retryable).toBe(true);
    first.unsubscribe();
  });

  it('monthly usage exhausted closes with 4029', async () => {
    const emu = await emulator({}, [{ keys: [KEY], monthlyUsageQuotaMs: { conversation: 500 } }]);
    await lastValueFrom(from(pcm(6)).pipe(analyzeConversation({ reconnect: false, apiKey: KEY, baseUrl: emu.baseUrl, format: RAW })));
    await waitFor(() => emu.accounts.organizations[0]!.usedMs.conversation >= 500);
    const r = await failure(from(pcm(1)).pipe(analyzeConversation({ reconnect: false, apiKey: KEY, baseUrl: emu.baseUrl, format: RAW })));
    expect(r.error.code).toBe('monthly_usage_limit');
    expect(r.error.closeCode).toBe(4029);
    expect(r.error.retryable).toBe(false);
  });

  it('a handshake answered with an HTTP status is mapped from its detail', async () => {
    const emu = await emulator({ faults: [{ at: 'handshake', action: 'http', status: 503, detail: 'Service temporarily unavailable. Please try again later.' }] });
    const r = await failure(from(pcm(1)).pipe(analyzeConversation({ reconnect: false, apiKey: KEY, baseUrl: emu.baseUrl, format: RAW })));
    expect(r.error.code).toBe('service_unavailable');
    expect(r.error.status).toBe(503);
    expect(r.error.retryable).toBe(true);
  });

  it('a refused connection is connection_failed', async () => {
    const emu = await emulator();
    const url = emu.baseUrl;
    await emu.close();
    const r = await failure(from(pcm(1)).pipe(analyzeConversation({ reconnect: false, apiKey: KEY, baseUrl: url, format: RAW })));
    expect(r.error.code).toBe('connection_failed');
    expect(r.error.retryable).toBe(true);
  });

  it('a server that accepts TCP but never answers the handshake is connect_timeout', async () => {
    const sockets = new Set<import('node:net').Socket>();
    const server: Server = createServer((s) => sockets.add(s));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    try {
      const port = (server.address() as import('node:net').AddressInfo).port;
      // On virtual time: the connect timer is the only one pending once the server has the socket.
      const scheduler = new VirtualTimeScheduler();
      const pending = failure(from(pcm(1)).pipe(analyzeConversation({ reconnect: false, apiKey: KEY, baseUrl: `http://127.0.0.1:${port}`, format: RAW, scheduler })));
      await waitFor(() => sockets.size > 0);
      scheduler.flush();
      const r = await pending;
      expect(r.error.code).toBe('connect_timeout');
    } finally {
      for (const s of sockets) s.destroy();
      await new Promise((r) => server.close(r));
    }
  });
});

describe('analyzeConversation: faults mid-session never hang', () => {
  it('a dropped connection mid-audio is connection_lost with audio accounted for', async () => {
    const emu = await emulator({ faults: [{ at: 'audio', at_ms: 300, action: 'drop' }] });
    const r = await failure(from(pcm(100)).pipe(analyzeConversation({ reconnect: false, apiKey: KEY, baseUrl: emu.baseUrl, format: RAW })));
    expect(r.error.code).toBe('connection_lost');
    expect(r.error.closeCode).toBe(1006);
    const a = r.error.audio!;
    expect(a.read).toBe(a.sent + a.unsent);
    expect(a.read).toBeGreaterThan(0);
  });

  it('a server that stalls after the end of audio is done_timeout', async () => {
    const emu = await emulator({ faults: [{ at: 'end', action: 'stall' }] });
    // On virtual time: once `finishing`, the done timer is the only one pending.
    const scheduler = new VirtualTimeScheduler();
    const states: string[] = [];
    // No heartbeat: on virtual time the clock jumps to the deadline while no pong can arrive.
    const pending = failure(from(pcm(3)).pipe(analyzeConversation({ reconnect: false, apiKey: KEY, baseUrl: emu.baseUrl, format: RAW, scheduler, heartbeat: false, onStateChange: (_, s) => states.push(s.status) })));
    await waitFor(() => states.includes('finishing'));
    scheduler.flush();
    const r = await pending;
    expect(r.error.code).toBe('done_timeout');
    expect(r.error.retryable).toBe(true);
  });

  it('an error event is emitted, then the session errors with its detail', async () => {
    const emu = await emulator({ faults: [{ at: 'audio', at_ms: 100, action: 'close', code: 4002, error: 'Invalid input audio' }] });
    const r = await failure(from(pcm(10)).pipe(analyzeConversation({ reconnect: false, apiKey: KEY, baseUrl: emu.baseUrl, format: RAW })));
    expect(r.events.at(-1)).toEqual({ type: 'error', error: 'Invalid input audio' });
    expect(r.error.code).toBe('invalid_audio');
  });

  it('a malformed frame is malformed_frame, a ContractError (as a bad HTTP body is) with the audio account', async () => {
    const emu = await emulator({ faults: [{ at: 'config', action: 'malformed' }] });
    const r = await failure(from(pcm(3)).pipe(analyzeConversation({ reconnect: false, apiKey: KEY, baseUrl: emu.baseUrl, format: RAW })));
    expect(r.error.code).toBe('malformed_frame');
    expect(r.error).toBeInstanceOf(ContractError);
    expect(r.error.audio).toMatchObject({ read: expect.any(Number) });
  });

  it('with strict, a frame that breaks the contract is malformed_frame naming the field', async () => {
    const emu = await emulator({ steps: [{ event: { type: 'topic_sentiment', topic_sentiment: { topic: 't', speaker_label: '1', sentiment_score: 3 } } }] });
    // strict: the default tolerates it (test/session/tolerance.test.ts).
    const r = await failure(from(pcm(3)).pipe(analyzeConversation({ reconnect: false, apiKey: KEY, baseUrl: emu.baseUrl, format: RAW, strict: true })));
    expect(r.error.code).toBe('malformed_frame');
    expect(r.error.message).toContain('sentiment_score');
  });

  it('an oversized frame is refused', async () => {
    const emu = await emulator({ faults: [{ at: 'config', action: 'oversized', bytes: 300_000 }] });
    const r = await failure(from(pcm(3)).pipe(analyzeConversation({ reconnect: false, apiKey: KEY, baseUrl: emu.baseUrl, format: RAW, maxServerFrameBytes: 100_000 })));
    expect(r.error.code).toBe('malformed_frame');
  });
});

describe('analyzeConversation: teardown and upstream errors', () => {
  it('unsubscribing early closes the socket and stops the source', async () => {
    const emu = await emulator();
    let sourceTornDown = false;
    const source = new Observable<Uint8Array>((s) => {
      s.next(new Uint8Array(3200));
      return () => {
        sourceTornDown = true;
      };
    });
    const stats = createSessionStats();
    const sub = source.pipe(analyzeConversation({ reconnect: false, apiKey: KEY, baseUrl: emu.baseUrl, format: RAW, stats })).subscribe();
    // Open on both sides: the emulator counts the session at its upgrade, before the client has
    // read the handshake's answer (a socket still connecting is cut, not closed with 1000).
    await waitFor(() => emu.accounts.organizations[0]!.inFlight.conversation === 1 && stats.framesSent > 0);
    sub.unsubscribe();
    expect(sourceTornDown).toBe(true);
    await waitFor(() => emu.connections.length === 1);
    expect(emu.connections[0]!.closeCode).toBe(1000);
    expect(emu.accounts.organizations[0]!.inFlight.conversation).toBe(0);
  });

  it('an upstream error closes the session and is propagated as is', async () => {
    const emu = await emulator();
    const boom = new Error('microphone unplugged');
    // The error comes once the session is streaming, so the server sees the close.
    const source = concat(from(pcm(2)), timer(300).pipe(mergeMap(() => throwError(() => boom))));
    const r = await failure(source.pipe(analyzeConversation({ reconnect: false, apiKey: KEY, baseUrl: emu.baseUrl, format: RAW })));
    expect(r.error).toBe(boom);
    await waitFor(() => emu.connections.length === 1);
  });

  it('take(n) downstream ends the session without waiting for done', async () => {
    const emu = await emulator({ steps: [clip('a', 100), clip('b', 200)] });
    const first = await firstValueFrom(from(pcm(10)).pipe(analyzeConversation({ reconnect: false, apiKey: KEY, baseUrl: emu.baseUrl, format: RAW }), filter((e) => e.type === 'clip'), take(1)));
    expect(first).toMatchObject({ type: 'clip', clip: { clip_uuid: 'a' } });
    await waitFor(() => emu.connections.length === 1);
  });
});

describe('analyzeConversation: backpressure', () => {
  it('a push-only source into a server that stops reading fails with backpressure_overflow, not unbounded memory', async () => {
    const emu = await emulator({ faults: [{ at: 'config', action: 'stop_reading' }] });
    const big = new Uint8Array(1 << 20);
    const source = new Observable<Uint8Array>((s) => {
      let stop = false;
      const pump = (): void => {
        for (let i = 0; i < 8 && !stop; i++) s.next(big);
        if (!stop) setTimeout(pump, 5);
      };
      pump();
      return () => {
        stop = true;
      };
    });
    const r = await failure(source.pipe(analyzeConversation({ reconnect: false, apiKey: KEY, baseUrl: emu.baseUrl, format: RAW, maxBufferedBytes: 8 << 20 })));
    expect(r.error.code).toBe('backpressure_overflow');
    expect(r.error.audio!.unsent).toBeGreaterThan(0);
    expect(r.error.audio!.read).toBe(r.error.audio!.sent + r.error.audio!.unsent);
  }, 30_000);

  it('a pull-capable source is paused instead: bytes read stay bounded', async () => {
    const emu = await emulator({ faults: [{ at: 'config', action: 'stop_reading' }] });
    const slot = { current: undefined as FlowControl | undefined };
    let produced = 0;
    const source = withAudioMeta(
      new Observable<Uint8Array>((s) => {
        const flow = slot.current;
        slot.current = undefined;
        let stop = false;
        void (async () => {
          while (!stop) {
            if (flow?.paused) await flow.ready();
            if (stop) break;
            produced += 65_536;
            s.next(new Uint8Array(65_536));
            await new Promise((r) => setImmediate(r));
          }
        })();
        return () => {
          stop = true;
        };
      }),
      { format: RAW, flow: slot },
    );
    const stats = createSessionStats();
    const sub = source.pipe(analyzeConversation({ reconnect: false, apiKey: KEY, baseUrl: emu.baseUrl, highWaterMark: 1 << 20, stats })).subscribe({ error: () => undefined });
    await waitFor(() => stats.pauses > 0, 10_000);
    const atPause = produced;
    await new Promise((r) => setTimeout(r, 300));
    // The kernel's socket buffers absorb some bytes before the pause; after it, nothing more is read.
    expect(produced).toBe(atPause);
    expect(stats.bytesRead - stats.bytesSent).toBeLessThanOrEqual((1 << 20) + 65_536);
    sub.unsubscribe();
  }, 30_000);
});

describe('secrets stay secret', () => {
  it('the api key appears in no error message, detail or serialisation', async () => {
    const emu = await emulator({ faults: [{ at: 'handshake', action: 'http', status: 500, detail: 'Internal server error' }] });
    const errors: SvcError[] = [];
    errors.push((await failure(from(pcm(1)).pipe(analyzeConversation({ reconnect: false, apiKey: KEY, baseUrl: emu.baseUrl, format: RAW })))).error);
    const other = await emulator();
    errors.push((await failure(from(pcm(1)).pipe(analyzeConversation({ reconnect: false, apiKey: `${KEY}-wrong`, baseUrl: other.baseUrl, format: RAW })))).error);
    errors.push((await failure(from(pcm(1)).pipe(analyzeConversation({ reconnect: false, apiKey: KEY, baseUrl: 'http://127.0.0.1:9', format: RAW })))).error);
    const accepted = new Set<import('node:net').Socket>();
    const s = createServer((sock) => accepted.add(sock));
    await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
    const port = (s.address() as import('node:net').AddressInfo).port;
    errors.push((await failure(from(pcm(1)).pipe(analyzeConversation({ reconnect: false, apiKey: KEY, baseUrl: `http://127.0.0.1:${port}`, format: RAW, connectTimeoutMs: 100 })))).error);
    for (const sock of accepted) sock.destroy();
    await new Promise((r) => s.close(r));
    for (const e of errors) {
      const text = [e.message, String(e), e.stack ?? '', JSON.stringify(e), JSON.stringify(e.detail ?? null), String((e as { cause?: unknown }).cause ?? '')].join('\n');
      expect(text).not.toContain(KEY);
      expect(text).not.toContain(encodeURIComponent(KEY));
    }
  });
});

describe('the protocol seen by a plain ws client (a client we did not write)', () => {
  it('audio before the config frame is an error event then close 1003', async () => {
    const emu = await emulator();
    const ws = new WebSocket(`${emu.baseUrl.replace('http', 'ws')}/api/svc-2-streaming?api_key=${KEY}&audio_format=s16le&sample_rate=16000&num_channels=1`);
    const frames: string[] = [];
    ws.on('message', (d) => frames.push(d.toString()));
    ws.on('open', () => ws.send(new Uint8Array(320)));
    const code = await new Promise<number>((r) => ws.on('close', (c) => r(c)));
    expect(code).toBe(1003);
    expect(JSON.parse(frames[0]!)).toMatchObject({ type: 'error' });
  });
});
