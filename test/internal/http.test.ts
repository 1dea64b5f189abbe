// The one HTTP core (src/internal/http.ts) against real loopback servers: redirects never carry
// a key to another origin, response size and time limits, early answers, aborts; through the
// public calls that use it (listPresets, a batch call, PlatformClient) and directly.
import { truncateSync } from 'node:fs';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { SvcError } from 'svc-stream';
import { detectAudioEventsAsync, listPresetsAsync } from 'svc-stream/batch';
import { PlatformClient } from 'svc-stream/platform';
import { sendHttp, type HttpBody } from '../../src/internal/http.js';
import { json, loopback, tinyWav, type Handler, type Loopback } from './loopback.js';

const KEY = 'sk-test-REDIRECT-0123456789';
const PLATFORM_KEY = 'pk-test-REDIRECT-9876543210';
const ACCOUNT = 'acct-0000-1111';

let open: Loopback[] = [];
async function serve(handler: Handler): Promise<Loopback> {
  const l = await loopback(handler);
  open.push(l);
  return l;
}
afterEach(async () => {
  await Promise.all(open.map((l) => l.close()));
  open = [];
});

let wav: ReturnType<typeof tinyWav>;
beforeAll(() => {
  wav = tinyWav();
});
afterAll(() => wav.remove());

async function failure(p: Promise<unknown>): Promise<SvcError> {
  const e = await p.then(
    () => undefined,
    (err: unknown) => err,
  );
  expect(e).toBeInstanceOf(SvcError);
  return e as SvcError;
}

/** The calls under test, each pointed at `base`: GET and POST for the models and orchestration APIs. */
function calls(base: string, extra: Record<string, unknown> = {}) {
  const models = { baseUrl: base, apiKey: KEY, retry: false as const, ...extra };
  const platform = () => new PlatformClient({ baseUrl: `${base}/platform`, accountUuid: ACCOUNT, apiKey: PLATFORM_KEY, env: {}, ...extra });
  return {
    'listPresets (GET)': () => listPresetsAsync(models),
    'a batch call (POST multipart)': () => detectAudioEventsAsync(wav.path, models),
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
    const result = await detectAudioEventsAsync(wav.path, { baseUrl: service.origin, apiKey: KEY, retry: false });
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

describe('response size', () => {
  /** Answers 200 and writes 64 KiB chunks until the client goes away. */
  const endless: Handler = (_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    const chunk = Buffer.alloc(65_536, 0x20);
    const pump = (): void => {
      while (!res.destroyed && res.write(chunk));
      if (!res.destroyed) res.once('drain', pump);
    };
    res.write('{"presets":[');
    pump();
  };

  it('an endless 200 body fails with response_too_large, the socket closed, memory bounded', async () => {
    const service = await serve(endless);
    const before = process.memoryUsage().rss;
    const models = { baseUrl: service.origin, apiKey: KEY, retry: false as const };
    for (const [name, call] of Object.entries({
      presets: () => listPresetsAsync(models),
      batch: () => detectAudioEventsAsync(wav.path, models),
      platform: () => new PlatformClient({ baseUrl: service.origin, accountUuid: ACCOUNT, apiKey: PLATFORM_KEY, env: {} }).getJob('j'),
    })) {
      const err = await failure(call());
      expect(err.code, name).toBe('response_too_large');
      expect(err.message).toContain('maxResponseBytes=8388608');
    }
    await service.closedAtLeast(3);
    // The old client grew to gigabytes; the default cap is 8 MiB per answer.
    expect(process.memoryUsage().rss - before).toBeLessThan(256 << 20);
  });

  it('maxResponseBytes per call and per client; a declared length over it fails before reading', async () => {
    const service = await serve((req, res) => {
      if (req.url!.includes('declared')) res.writeHead(200, { 'content-length': String(1 << 30) }).write('{');
      else json(res, 200, { presets: [], job_id: 'j', status: 'processing', pad: 'x'.repeat(2000) });
    });
    expect((await failure(listPresetsAsync({ baseUrl: service.origin, apiKey: KEY, retry: false, maxResponseBytes: 1000 }))).code).toBe('response_too_large');
    const client = new PlatformClient({ baseUrl: service.origin, accountUuid: ACCOUNT, apiKey: PLATFORM_KEY, env: {}, maxResponseBytes: 1000 });
    expect((await failure(client.getJob('j'))).code).toBe('response_too_large');
    expect((await client.getJob('j', { maxResponseBytes: 10_000 })).status).toBe('processing');
    const declared = await failure(client.getJob('declared', { maxResponseBytes: 10_000 }));
    expect(declared.code).toBe('response_too_large');
    expect(declared.message).toContain(`declared ${1 << 30} bytes`);
    await service.closedAtLeast(3);
  });
});

describe('response time', () => {
  it('a body that stalls fails with response_timeout after idleTimeoutMs; the socket is closed', async () => {
    const service = await serve((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': '1000' });
      res.write('{"presets":');
    });
    const err = await failure(listPresetsAsync({ baseUrl: service.origin, apiKey: KEY, retry: false, idleTimeoutMs: 150 }));
    expect(err.code).toBe('response_timeout');
    expect(err.message).toMatch(/stalled.*idleTimeoutMs/);
    const client = new PlatformClient({ baseUrl: service.origin, accountUuid: ACCOUNT, apiKey: PLATFORM_KEY, env: {}, idleTimeoutMs: 150 });
    expect((await failure(client.getJob('j'))).code).toBe('response_timeout');
    expect((await failure(detectAudioEventsAsync(wav.path, { baseUrl: service.origin, apiKey: KEY, retry: false, idleTimeoutMs: 150 }))).code).toBe('response_timeout');
    await service.closedAtLeast(3);
  });

  it('headers that never come fail with response_timeout after headersTimeoutMs (per call and per client)', async () => {
    const service = await serve((req) => req.resume());
    const err = await failure(listPresetsAsync({ baseUrl: service.origin, apiKey: KEY, retry: false, headersTimeoutMs: 150 }));
    expect(err.code).toBe('response_timeout');
    expect(err.message).toMatch(/no response headers within 150 ms/);
    const client = new PlatformClient({ baseUrl: service.origin, accountUuid: ACCOUNT, apiKey: PLATFORM_KEY, env: {}, headersTimeoutMs: 150 });
    expect((await failure(client.submitRealtime())).code).toBe('response_timeout');
    const perCall = new PlatformClient({ baseUrl: service.origin, accountUuid: ACCOUNT, apiKey: PLATFORM_KEY, env: {} });
    expect((await failure(perCall.getJob('j', { headersTimeoutMs: 150 }))).message).toMatch(/within 150 ms/);
    expect((await failure(detectAudioEventsAsync(wav.path, { baseUrl: service.origin, apiKey: KEY, retry: false, headersTimeoutMs: 150 }))).code).toBe('response_timeout');
    // Through an injected fetch as well.
    expect((await failure(listPresetsAsync({ baseUrl: service.origin, apiKey: KEY, retry: false, headersTimeoutMs: 150, fetch: globalThis.fetch }))).code).toBe('response_timeout');
    await service.closedAtLeast(5);
  });

  it('an upload the server stops reading fails with response_timeout after idleTimeoutMs', async () => {
    const service = await serve((req) => req.pause());
    const big = tinyWav();
    truncateSync(big.path, 64 << 20);
    try {
      const err = await failure(detectAudioEventsAsync(big.path, { baseUrl: service.origin, apiKey: KEY, retry: false, idleTimeoutMs: 300 }));
      expect(err.code).toBe('response_timeout');
      expect(err.message).toMatch(/upload stalled/);
    } finally {
      big.remove();
    }
  });

  it('rejects limits that are not numbers ≥ 0', async () => {
    const err = await failure(listPresetsAsync({ baseUrl: 'http://127.0.0.1:1', apiKey: KEY, retry: false, idleTimeoutMs: -1 }));
    expect(err.code).toBe('invalid_argument');
  });
});

/** `mb` MiB of zeros in 64 KiB chunks, counting what was pulled. */
function zeros(mb: number, pulled: { bytes: number }): HttpBody {
  return {
    contentType: 'application/octet-stream',
    contentLength: mb << 20,
    open: async function* () {
      const chunk = new Uint8Array(65_536);
      for (let i = 0; i < mb * 16; i++) {
        pulled.bytes += chunk.length;
        yield chunk;
      }
    },
  };
}

describe('the transport', () => {
  const post = (origin: string, body: HttpBody, signal?: AbortSignal) =>
    sendHttp({ method: 'POST', url: new URL(`${origin}/upload`), headers: {}, body, context: 'POST /upload', secrets: [], signal });

  it('streams the whole body with backpressure and resolves with the parsed answer', async () => {
    const service = await serve((req, res) => {
      let n = 0;
      req.on('data', (c: Buffer) => (n += c.length));
      req.on('end', () => json(res, 200, { received: n }));
    });
    const pulled = { bytes: 0 };
    expect(await post(service.origin, zeros(8, pulled))).toEqual({ status: 200, body: { received: 8 << 20 } });
    expect(pulled.bytes).toBe(8 << 20);
  });

  it('an answer given before the body is read wins over the broken pipe, and reading stops', async () => {
    const service = await serve((req, res) => {
      res.writeHead(413, { 'content-type': 'application/json', connection: 'close' }).end(JSON.stringify({ detail: 'too large' }));
      res.on('finish', () => req.socket.destroy());
    });
    const pulled = { bytes: 0 };
    expect(await post(service.origin, zeros(200, pulled))).toEqual({ status: 413, body: { detail: 'too large' } });
    expect(pulled.bytes).toBeLessThan(64 << 20);
  });

  it('a refused connection fails with connection_failed', async () => {
    const service = await serve(() => undefined);
    await service.close();
    const err = await failure(post(service.origin, zeros(1, { bytes: 0 })));
    expect(err.code).toBe('connection_failed');
    expect(err.message).toMatch(/ECONNREFUSED/);
  });

  it('aborting mid-upload fails with aborted and stops pulling the body', async () => {
    const service = await serve((req) => req.resume());
    const controller = new AbortController();
    const pulled = { bytes: 0 };
    const p = post(service.origin, zeros(1024, pulled), controller.signal);
    setTimeout(() => controller.abort(), 50);
    expect((await failure(p)).code).toBe('aborted');
    const atAbort = pulled.bytes;
    await new Promise((r) => setTimeout(r, 100));
    expect(pulled.bytes).toBe(atAbort);
    expect(pulled.bytes).toBeLessThan(1 << 30);
  });

});
