// The one HTTP core (src/internal/http.ts) against real loopback servers: redirects never carry
// a key to another origin, the limits are checked before anything is sent; through the public
// calls that use it (listPresets, a batch call, PlatformClient). The exchange on the wire (size
// and time limits, the upload, aborts) is httpExchange.test.ts's.
import { describe, expect, it } from 'vitest';
import { detectAudioEventsAsync, listPresetsAsync } from 'svc-stream/batch';
import { PlatformClient } from 'svc-stream/platform';
import { json, loopbackFixture, svcFailure } from './loopback.js';

const KEY = 'sk-test-REDIRECT-0123456789';
const PLATFORM_KEY = 'pk-test-REDIRECT-9876543210';
const ACCOUNT = 'acct-0000-1111';

const { serve, wav: fixtureWav } = loopbackFixture();
const failure = svcFailure;

/** The calls under test, each pointed at `base`: GET and POST for the models and orchestration APIs. */
function calls(base: string, extra: Record<string, unknown> = {}) {
  const models = { baseUrl: base, apiKey: KEY, retry: false as const, ...extra };
  const platform = () => new PlatformClient({ baseUrl: `${base}/platform`, accountUuid: ACCOUNT, apiKey: PLATFORM_KEY, env: {}, ...extra });
  return {
    'listPresets (GET)': () => listPresetsAsync(models),
    'a batch call (POST multipart)': () => detectAudioEventsAsync(fixtureWav().path, models),
    'PlatformClient.getJob (GET)': () => platform().getJob('job-1'),
    'PlatformClient.submitRealtime (POST JSON)': () => platform().submitRealtime(),
  };
}

describe('redirects', () => {
  for (const status of [307, 308, 302]) {
    it(`a ${status} to another loopback origin is refused for GET and POST; that origin receives nothing`, async () => {
      const other = await serve((_req, res) => json(res, 200, { presets: [], job_id: 'x', status: 'completed' }));
      const service = await serve((req, res) => res.writeHead(status, { location: `${other.origin}${req.url}` }).end());
      for (const [name, call] of Object.entries(calls(service.origin))) {
        const err = await failure(call());
        expect(err.code, name).toBe('redirect_refused');
        expect(err.status, name).toBe(status);
        expect(err.retryable).toBe(false);
        expect(err.message, name).toContain(other.origin);
      }
      expect(service.seen).toHaveLength(4);
      expect(other.seen).toEqual([]);
    });
  }

  it('is refused through an injected fetch too', async () => {
    const other = await serve((_req, res) => json(res, 200, { presets: [] }));
    const service = await serve((req, res) => res.writeHead(307, { location: `${other.origin}${req.url}` }).end());
    for (const [name, call] of Object.entries(calls(service.origin, { fetch: globalThis.fetch }))) {
      if (name.startsWith('a batch call')) continue; // uploads always go over node:http
      expect((await failure(call())).code, name).toBe('redirect_refused');
    }
    expect(other.seen).toEqual([]);
  });

  it('a redirect to another scheme or port of the same host is another origin; a relative one is not', async () => {
    const service = await serve((req, res) => {
      if (req.url === '/api/svc-2-batch/list-presets') res.writeHead(301, { location: '/moved/list-presets' }).end();
      else if (req.url === '/moved/list-presets') json(res, 200, { presets: [{ identifier: 'x', name: 'X', short_description: 's', detailed_description: 'd' }] });
      else res.writeHead(307, { location: req.url!.replace('http:', 'https:') }).end();
    });
    const presets = await listPresetsAsync({ baseUrl: service.origin, apiKey: KEY, retry: false });
    expect(presets.map((p) => p.identifier)).toEqual(['x']);
    // The followed hop carried the key to the same origin only.
    expect(service.seen.map((s) => [s.url, s.headers['x-api-key']])).toEqual([
      ['/api/svc-2-batch/list-presets', KEY],
      ['/moved/list-presets', KEY],
    ]);
    const https = await serve((req, res) => res.writeHead(308, { location: `https://127.0.0.1:${new URL(service.origin).port}${req.url}` }).end());
    expect((await failure(listPresetsAsync({ baseUrl: https.origin, apiKey: KEY, retry: false }))).code).toBe('redirect_refused');
  });

  it('a same-origin 307 resends a POST with its body; a 302 for a POST and a redirect loop are refused', async () => {
    const bodies: number[] = [];
    const service = await serve((req, res) => {
      let n = 0;
      req.on('data', (c: Buffer) => (n += c.length));
      req.on('end', () => {
        bodies.push(n);
        if (req.url === '/api/svc-2-audio-event-classifier') res.writeHead(307, { location: '/again' }).end();
        else if (req.url === '/again') json(res, 200, { probs: {}, duration_ms: 1 });
        else if (req.url === '/platform/api_service') res.writeHead(302, { location: '/platform/elsewhere' }).end();
        else res.writeHead(307, { location: req.url }).end();
      });
    });
    const result = await detectAudioEventsAsync(fixtureWav().path, { baseUrl: service.origin, apiKey: KEY, retry: false });
    expect(result.duration_ms).toBe(1);
    expect(bodies).toHaveLength(2);
    expect(bodies[0]).toBeGreaterThan(4096);
    expect(bodies[1]).toBe(bodies[0]);
    const platform = new PlatformClient({ baseUrl: `${service.origin}/platform`, accountUuid: ACCOUNT, apiKey: PLATFORM_KEY, env: {} });
    expect((await failure(platform.submitRealtime())).code).toBe('redirect_refused');
    expect(service.seen.filter((s) => s.url === '/platform/elsewhere')).toEqual([]);
    const loop = await failure(platform.getJob('j'));
    expect(loop.code).toBe('redirect_refused');
    expect(loop.message).toMatch(/more than 3/);
  });
});

describe('limits', () => {
  it('rejects limits that are not numbers ≥ 0', async () => {
    const err = await failure(listPresetsAsync({ baseUrl: 'http://127.0.0.1:1', apiKey: KEY, retry: false, idleTimeoutMs: -1 }));
    expect(err.code).toBe('invalid_argument');
  });
});
