// A public media-stream bridge is not open to anyone: a token, Twilio's request signature or
// a check of your own decides on the upgrade request. Real sockets on loopback, a plain `ws`
// client as the provider.
import { afterEach, describe, expect, it } from 'vitest';
import { twilioSignature, verifyTwilioSignature } from '../../src/telephony/mediaStreamAuth.js';
import { collectBytes } from './helpers.js';
import { attempt, cleanUp, serve, twilioSession } from './mediaStreams.js';

afterEach(cleanUp);

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

});
