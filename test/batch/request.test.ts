// One batch call (src/batch/request.ts): retries by cause through fault routes, bounded, a
// body outside the contract refused; cancellation by AbortSignal and by unsubscribing.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LIMIT_DETAILS, sendJson, type HttpRoute } from 'svc-stream/emulator';
import { batchLimiter, detectAudioEvents, detectAudioEventsAsync, listPresetsAsync } from 'svc-stream/batch';
import { afterBody, audioDir, emulators, hanging, type AudioDir } from './fixtures.js';

const AE = '/api/svc-2-audio-event-classifier';
const FAST_RETRY = { concurrencyDelayMs: 2, transientDelayMs: 2, jitter: 0.5 };

let files: AudioDir;
let tone: string;
beforeAll(() => {
  files = audioDir();
  tone = files.tone('r0.wav', 1);
}, 60_000);
afterAll(() => files?.remove());

const emulator = emulators();

describe('retries by cause (fault routes)', () => {
  const okBody = { probs: {}, duration_ms: 1000 };
  function scripted(answers: [number, unknown][]): { route: HttpRoute; hits: () => number } {
    let n = 0;
    return {
      hits: () => n,
      route: {
        method: 'POST',
        path: AE,
        handler: (req: IncomingMessage, res: ServerResponse) =>
          afterBody(req, () => {
            const [status, body] = answers[Math.min(n++, answers.length - 1)]!;
            sendJson(res, status, body);
          }),
      },
    };
  }

  it('429 concurrency twice, then 200: two retries with jittered waits', async () => {
    const s = scripted([[429, { detail: LIMIT_DETAILS.concurrency_limit }], [429, { detail: LIMIT_DETAILS.concurrency_limit }], [200, okBody]]);
    const emu = await emulator({ routes: [s.route] });
    const waits: number[] = [];
    const r = await detectAudioEventsAsync(tone, {
      baseUrl: emu.baseUrl,
      apiKey: emu.apiKey,
      retry: { concurrencyDelayMs: 10, factor: 2, jitter: 0.5, random: () => 1 },
      onRetry: (_e, _n, ms) => waits.push(ms),
    });
    expect(r).toEqual(okBody);
    expect(s.hits()).toBe(3);
    expect(waits).toEqual([10, 20]);
  });

  it.each([
    [502, { detail: 'Unable to validate request. Please try again.' }],
    [503, { detail: 'Service temporarily unavailable. Please try again later.' }],
    [504, { detail: 'The request timed out. Please try again.' }],
  ])('%i is retried with backoff', async (status, body) => {
    const s = scripted([[status, body], [200, okBody]]);
    const emu = await emulator({ routes: [s.route] });
    expect(await detectAudioEventsAsync(tone, { baseUrl: emu.baseUrl, apiKey: emu.apiKey, retry: FAST_RETRY })).toEqual(okBody);
    expect(s.hits()).toBe(2);
  });

  it('retries are bounded: the last error comes out', async () => {
    const s = scripted([[503, { detail: 'Service temporarily unavailable. Please try again later.' }]]);
    const emu = await emulator({ routes: [s.route] });
    const err = await detectAudioEventsAsync(tone, { baseUrl: emu.baseUrl, apiKey: emu.apiKey, retry: { ...FAST_RETRY, transientRetries: 2 } }).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'service_unavailable', status: 503 });
    expect(s.hits()).toBe(3);
  });

  it.each([
    [429, LIMIT_DETAILS.monthly_usage_limit],
    [429, LIMIT_DETAILS.monthly_credit_limit],
    [429, LIMIT_DETAILS.insufficient_credits],
    [401, 'Invalid API key.'],
    [403, 'This API key does not have access to this model.'],
    [500, 'Internal server error'],
  ])('%i %s is never retried', async (status, detail) => {
    const s = scripted([[status, { detail }], [200, okBody]]);
    const emu = await emulator({ routes: [s.route] });
    await expect(detectAudioEventsAsync(tone, { baseUrl: emu.baseUrl, apiKey: emu.apiKey, retry: FAST_RETRY })).rejects.toMatchObject({ status });
    expect(s.hits()).toBe(1);
  });

  it('a 200 body outside the contract is a ContractError', async () => {
    const s = scripted([[200, { probs: { NotAnEvent: 0.9 }, duration_ms: 1 }]]);
    const emu = await emulator({ routes: [s.route] });
    await expect(detectAudioEventsAsync(tone, { baseUrl: emu.baseUrl, apiKey: emu.apiKey })).rejects.toMatchObject({ name: 'ContractError', code: 'invalid_response' });
  });

  it('list-presets 502 is retried', async () => {
    let n = 0;
    const route: HttpRoute = {
      method: 'GET',
      path: '/api/svc-2-batch/list-presets',
      handler: (_req, res) => (n++ === 0 ? sendJson(res, 502, { detail: 'Unable to validate request. Please try again.' }) : sendJson(res, 200, { presets: [] })),
    };
    const emu = await emulator({ routes: [route] });
    expect(await listPresetsAsync({ baseUrl: emu.baseUrl, apiKey: emu.apiKey, retry: FAST_RETRY })).toEqual([]);
    expect(n).toBe(2);
  });
});

describe('cancellation', () => {
  it('AbortSignal cancels the upload in flight and fails with aborted', async () => {
    const h = hanging();
    const emu = await emulator({ routes: [h.route] });
    const ac = new AbortController();
    const p = detectAudioEventsAsync(tone, { baseUrl: emu.baseUrl, apiKey: emu.apiKey, signal: ac.signal });
    await h.arrived;
    ac.abort();
    await expect(p).rejects.toMatchObject({ code: 'aborted' });
    await h.closed; // the server saw the connection go
    expect(batchLimiter({ model: 'audio-event', baseUrl: emu.baseUrl, apiKey: emu.apiKey }).inUse).toBe(0);
  });

  it('unsubscribing cancels the request in flight', async () => {
    const h = hanging();
    const emu = await emulator({ routes: [h.route] });
    const sub = detectAudioEvents(tone, { baseUrl: emu.baseUrl, apiKey: emu.apiKey }).subscribe();
    await h.arrived;
    sub.unsubscribe();
    await h.closed;
  });
});
