// A public media-stream bridge is not open to anyone: a token, Twilio's request signature or
// a check of your own decides on the upgrade request; messages and connections are bounded.
// Real sockets on loopback, a plain `ws` client as the provider.
import { readFileSync } from 'node:fs';
import { request } from 'node:http';
import type { Subscription } from 'rxjs';
import { afterEach, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { createMediaStreamServerStats, mediaStreamServer, type MediaStreamCall, type MediaStreamServerOptions, type MediaStreamServerStats } from 'svc-stream/telephony';
import type { LimitWarning } from 'svc-stream';
import { twilioSignature, verifyTwilioSignature } from '../../src/telephony/mediaStreamAuth.js';
import { collectBytes, SAMPLE_MULAW } from './helpers.js';

const MULAW = readFileSync(SAMPLE_MULAW);
const subs: Subscription[] = [];
const clients: WebSocket[] = [];
afterEach(() => {
  for (const c of clients.splice(0)) c.terminate();
  subs.splice(0).forEach((s) => s.unsubscribe());
});

async function serve(options: MediaStreamServerOptions): Promise<{ port: number; stats: MediaStreamServerStats; calls: MediaStreamCall[] }> {
  const stats = createMediaStreamServerStats();
  const calls: MediaStreamCall[] = [];
  let resolvePort!: (p: number) => void;
  const port = new Promise<number>((r) => (resolvePort = r));
  subs.push(mediaStreamServer({ ...options, stats, onListening: (a) => resolvePort(a.port) }).subscribe((c) => calls.push(c)));
  return { port: await port, stats, calls };
}

interface Outcome {
  /** HTTP status of a refused upgrade, or 101. */
  readonly status: number;
  readonly closeCode?: number | undefined;
  readonly reason?: string | undefined;
}

/** Connect, send `frames`, close, and report how the server answered. */
function attempt(url: string, headers: Record<string, string> = {}, frames: readonly (string | Buffer)[] = []): Promise<Outcome> {
  return new Promise((resolve) => {
    const ws = new WebSocket(url, { headers });
    clients.push(ws);
    let status = 0;
    ws.on('unexpected-response', (_req, res) => {
      status = res.statusCode ?? 0;
      res.resume();
      ws.terminate();
      resolve({ status });
    });
    ws.on('upgrade', () => (status = 101));
    ws.on('open', () => {
      for (const f of frames) ws.send(f);
      ws.close();
    });
    ws.on('error', () => undefined);
    ws.on('close', (code, reason) => resolve({ status, closeCode: code, reason: reason.toString() }));
  });
}

/** A short Twilio session ending in `stop`. */
function twilioSession(sid: string, ms = 200): string[] {
  const out: object[] = [
    { event: 'connected', protocol: 'Call', version: '1.0.0' },
    { event: 'start', sequenceNumber: '1', streamSid: sid, start: { streamSid: sid, callSid: 'CA1', tracks: ['inbound'], mediaFormat: { encoding: 'audio/x-mulaw', sampleRate: 8000, channels: 1 } } },
  ];
  for (let k = 0; k < ms / 20; k++) {
    out.push({ event: 'media', streamSid: sid, media: { track: 'inbound', chunk: String(k + 1), timestamp: String(k * 20), payload: MULAW.subarray(k * 160, (k + 1) * 160).toString('base64') } });
  }
  out.push({ event: 'stop', streamSid: sid, stop: {} });
  return out.map((m) => JSON.stringify(m));
}

describe("Twilio's request signature", () => {
  it("matches Twilio's published examples (URL plus sorted POST parameters, HMAC-SHA1, base64)", () => {
    const url = 'https://mycompany.com/myapp.php?foo=1&bar=2';
    const params = (caller: string) => ({ CallSid: 'CA1234567890ABCDE', Caller: caller, Digits: '1234', From: caller, To: '+18005551212' });
    expect(twilioSignature('12345', url, params('+14158675310'))).toBe('GvWf1cFY/Q7PnoempGyD5oXAezc=');
    expect(twilioSignature('12345', url, params('+14158675309'))).toBe('RSOYDt4T1cUTdK1PDd93/VVr8B8=');
  });

  it('a GET upgrade signs the URL alone; the default port may be written or not', () => {
    const sig = twilioSignature('token', 'wss://bridge.example.com/media');
    expect(verifyTwilioSignature('token', sig, 'wss://bridge.example.com/media')).toBe(true);
    expect(verifyTwilioSignature('token', sig, 'wss://bridge.example.com:443/media')).toBe(true);
    expect(verifyTwilioSignature('token', sig, 'wss://bridge.example.com/other')).toBe(false);
    expect(verifyTwilioSignature('other-token', sig, 'wss://bridge.example.com/media')).toBe(false);
    expect(verifyTwilioSignature('token', undefined, 'wss://bridge.example.com/media')).toBe(false);
  });
});

describe('authenticate: decided on the upgrade request', () => {
  it('Twilio signature: a signed upgrade streams its call; unsigned, badly signed or replayed elsewhere gets 401', async () => {
    const refused: string[] = [];
    const s = await serve({ path: '/media', authenticate: { twilio: { authToken: 'auth-token-1' } }, onRefused: (r) => refused.push(r) });
    const url = `ws://127.0.0.1:${s.port}/media`;
    const signed = twilioSignature('auth-token-1', `wss://127.0.0.1:${s.port}/media`);

    expect(await attempt(url)).toEqual({ status: 401 });
    expect(await attempt(url, { 'X-Twilio-Signature': twilioSignature('wrong-token', `wss://127.0.0.1:${s.port}/media`) })).toEqual({ status: 401 });
    expect(await attempt(url, { 'X-Twilio-Signature': twilioSignature('auth-token-1', 'wss://elsewhere.example.com/media') })).toEqual({ status: 401 });
    expect(s.stats).toMatchObject({ unauthorized: 3, connections: 0 });
    expect(refused).toEqual(['bad_signature', 'bad_signature', 'bad_signature']);

    const ok = await attempt(url, { 'X-Twilio-Signature': signed }, twilioSession('MZ1'));
    expect(ok.status).toBe(101);
    expect(s.calls).toHaveLength(1);
    expect((await collectBytes(s.calls[0]!.audio$)).byteLength).toBe(1600);
  });

  it('the public URL can be given, for a bridge behind a proxy', async () => {
    const s = await serve({ authenticate: { twilio: { authToken: 't', url: 'wss://calls.example.com/stream' } } });
    const url = `ws://127.0.0.1:${s.port}/anything`;
    expect((await attempt(url, { 'X-Twilio-Signature': twilioSignature('t', 'wss://calls.example.com/stream') })).status).toBe(101);
    expect((await attempt(url, { 'X-Twilio-Signature': twilioSignature('t', `wss://127.0.0.1:${s.port}/anything`) })).status).toBe(401);
  });

  it('a shared token as a bearer header or a token query parameter; anything else 401', async () => {
    const s = await serve({ authenticate: { token: 's3cret-token' } });
    const base = `ws://127.0.0.1:${s.port}/`;
    expect((await attempt(base)).status).toBe(401);
    expect((await attempt(base, { Authorization: 'Bearer nope' })).status).toBe(401);
    expect((await attempt(`${base}?token=s3cret-tokem`)).status).toBe(401);
    expect((await attempt(base, { Authorization: 'Bearer s3cret-token' })).status).toBe(101);
    expect((await attempt(`${base}?token=s3cret-token`)).status).toBe(101);
    expect(s.stats.unauthorized).toBe(3);
  });

  it('every configured check must pass, your own included (async, and a throw refuses)', async () => {
    const s = await serve({
      authenticate: {
        token: 'tok',
        verify: async (req) => {
          if (req.headers['x-tenant'] === 'boom') throw new Error('lookup failed');
          return req.headers['x-tenant'] === 'acme';
        },
      },
    });
    const base = `ws://127.0.0.1:${s.port}/`;
    expect((await attempt(base, { Authorization: 'Bearer tok' })).status).toBe(401);
    expect((await attempt(base, { Authorization: 'Bearer tok', 'x-tenant': 'boom' })).status).toBe(401);
    expect((await attempt(base, { 'x-tenant': 'acme' })).status).toBe(401);
    expect((await attempt(base, { Authorization: 'Bearer tok', 'x-tenant': 'acme' })).status).toBe(101);
  });

  it('a plain HTTP request is answered 426, and a wrong path 404', async () => {
    const s = await serve({ path: '/media' });
    const status = await new Promise<number>((resolve, reject) => {
      request(`http://127.0.0.1:${s.port}/media`, (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      })
        .on('error', reject)
        .end();
    });
    expect(status).toBe(426);
    expect((await attempt(`ws://127.0.0.1:${s.port}/elsewhere`)).status).toBe(404);
  });
});

describe('bounded messages and connections', () => {
  it('a message over maxPayload closes its connection with 1009 and ends its call; the server carries on', async () => {
    const s = await serve({ maxPayload: 4096 });
    const url = `ws://127.0.0.1:${s.port}/`;
    const frames = twilioSession('MZ-big', 100);
    const big = JSON.stringify({ event: 'media', streamSid: 'MZ-big', media: { track: 'inbound', chunk: '99', timestamp: '2000', payload: 'A'.repeat(8000) } });
    const r = await attempt(url, {}, [...frames.slice(0, 4), big]);
    expect(r.closeCode).toBe(1009);
    expect(s.stats.oversized).toBe(1);
    expect(s.calls).toHaveLength(1);
    // The call's audio completes with what came before the oversized message.
    expect((await collectBytes(s.calls[0]!.audio$)).byteLength).toBe(320);
    const next = await attempt(url, {}, twilioSession('MZ-next'));
    expect(next.closeCode).toBe(1005);
    expect(s.calls).toHaveLength(2);
  });

  it('the default maxPayload is 64 KiB: a 100 KiB message is refused on its header', async () => {
    const s = await serve({});
    const r = await attempt(`ws://127.0.0.1:${s.port}/`, {}, [Buffer.alloc(100 * 1024)]);
    expect(r.closeCode).toBe(1009);
    expect(s.stats.oversized).toBe(1);
  });

  it('past maxConnections a connection is closed at once with 1013 "too many connections"; a freed place admits again', async () => {
    const warnings: LimitWarning[] = [];
    const s = await serve({ maxConnections: 2, onWarning: (w) => warnings.push(w) });
    const url = `ws://127.0.0.1:${s.port}/`;
    const holders = [new WebSocket(url), new WebSocket(url)];
    clients.push(...holders);
    await Promise.all(holders.map((h) => new Promise((r) => h.once('open', r))));
    await new Promise((r) => setTimeout(r, 20));
    const third = await attempt(url);
    expect(third).toEqual({ status: 101, closeCode: 1013, reason: 'too many connections' });
    expect(await attempt(url)).toMatchObject({ closeCode: 1013 });
    expect(s.stats).toMatchObject({ connections: 2, overCapacity: 2 });
    // Said once, with the option that raises the bound; the second refusal is only counted.
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatchObject({ code: 'max_connections', option: 'maxConnections', limit: 2 });
    expect(warnings[0]!.message).toMatch(/maxConnections/);
    holders[0]!.close();
    await new Promise((r) => holders[0]!.once('close', r));
    await new Promise((r) => setTimeout(r, 20));
    const again = await attempt(url, {}, twilioSession('MZ-again'));
    expect(again.closeCode).toBe(1005);
    expect(s.stats.connections).toBe(3);
  });
});
