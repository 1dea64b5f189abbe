// One HTTP exchange (src/internal/httpExchange.ts) against real loopback servers: response size
// and time limits, the upload streamed with backpressure, early answers, refused connections,
// aborts; through the public calls that use it (listPresets, a batch call, PlatformClient) and
// sendHttp directly. The redirect rule is http.test.ts's.
import { truncateSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { detectAudioEventsAsync, listPresetsAsync } from 'svc-stream/batch';
import { PlatformClient } from 'svc-stream/platform';
import { sendHttp, type HttpBody } from '../../src/internal/http.js';
import { json, loopbackFixture, svcFailure, tinyWav, type Handler } from './loopback.js';

const KEY = 'sk-test-REDIRECT-0123456789';
const PLATFORM_KEY = 'pk-test-REDIRECT-9876543210';
const ACCOUNT = 'acct-0000-1111';

const { serve, wav: fixtureWav } = loopbackFixture();
const failure = svcFailure;

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
      batch: () => detectAudioEventsAsync(fixtureWav().path, models),
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
    expect((await failure(detectAudioEventsAsync(fixtureWav().path, { baseUrl: service.origin, apiKey: KEY, retry: false, idleTimeoutMs: 150 }))).code).toBe('response_timeout');
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
    expect((await failure(detectAudioEventsAsync(fixtureWav().path, { baseUrl: service.origin, apiKey: KEY, retry: false, headersTimeoutMs: 150 }))).code).toBe('response_timeout');
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
