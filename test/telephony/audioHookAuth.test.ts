import type { IncomingMessage } from 'node:http';
import { describe, expect, it } from 'vitest';
import { AudioHookVerifier, audioHookSignatureHeaders, type AudioHookAuth } from '../../src/telephony/audioHookAuth.js';

// The worked example of Genesys' AudioHook documentation (its security page), with its key,
// secret and signature: the values every implementation checks itself against.
const DOC_KEY = 'SGVsbG8sIEkgYW0gdGhlIEFQSSBrZXkh';
const DOC_SECRET = 'TXlTdXBlclNlY3JldEtleVRlbGxOby0xITJAMyM0JDU=';
const DOC_HEADERS = {
  host: 'audiohook.example.com',
  'audiohook-organization-id': 'd7934305-0972-4844-938e-9060eef73d05',
  'audiohook-correlation-id': 'e160e428-53e2-487c-977d-96989bf5c99d',
  'audiohook-session-id': '30b0e395-84d3-4570-ac13-9a62d8f514c0',
  'x-api-key': DOC_KEY,
  signature: 'sig1=:NZBwyBHRRyRoeLqy1IzOa9VYBuI8TgMFt2GRDkDuJh4=:',
  'signature-input':
    'sig1=("@request-target" "@authority" "audiohook-organization-id" "audiohook-session-id" "audiohook-correlation-id" "x-api-key");keyid="SGVsbG8sIEkgYW0gdGhlIEFQSSBrZXkh";nonce="VGhpc0lzQVVuaXF1ZU5vbmNl";alg="hmac-sha256";created=1641013200;expires=3282026430',
};
const DOC_CREATED_MS = 1641013200_000;

/** An upgrade request as the server's HTTP side sees it (the verifier reads its url, method and headers). */
function request(headers: Record<string, string>, url = '/api/v1/voicebiometrics/ws'): IncomingMessage {
  return { url, method: 'GET', headers } as unknown as IncomingMessage;
}

function verifier(auth: Partial<AudioHookAuth> = {}, nowMs = DOC_CREATED_MS + 1000) {
  let now = nowMs;
  const v = new AudioHookVerifier({ apiKeys: { [DOC_KEY]: DOC_SECRET }, ...auth }, () => now);
  return { v, at: (ms: number) => (now = ms) };
}

/** Headers our signer makes for the documentation's request, at `created` (s). */
function signed(over: { created?: number; nonce?: string; secret?: string; url?: string } = {}): Record<string, string> {
  return {
    host: new URL(over.url ?? 'wss://audiohook.example.com/api/v1/voicebiometrics/ws').host,
    ...audioHookSignatureHeaders({
      url: over.url ?? 'wss://audiohook.example.com/api/v1/voicebiometrics/ws',
      apiKey: DOC_KEY,
      clientSecret: over.secret ?? DOC_SECRET,
      organizationId: DOC_HEADERS['audiohook-organization-id'],
      sessionId: DOC_HEADERS['audiohook-session-id'],
      correlationId: DOC_HEADERS['audiohook-correlation-id'],
      created: over.created ?? DOC_CREATED_MS / 1000,
      nonce: over.nonce ?? 'VGhpc0lzQVVuaXF1ZU5vbmNl',
    }),
  };
}

describe('AudioHook authentication: X-API-KEY and the HTTP message signature (RFC 9421, HMAC-SHA256)', () => {
  it("verifies the documentation's example request, and refuses it the second time (its nonce is spent)", async () => {
    const { v } = verifier();
    expect(await v.check(request(DOC_HEADERS))).toBeUndefined();
    expect(await v.check(request(DOC_HEADERS))).toEqual({ reason: 'replayed_nonce', detail: 'the signature nonce was used before' });
  });

  it('signs as Genesys does: the same signature base and parameters, so the same signature', () => {
    const h = audioHookSignatureHeaders({
      url: 'wss://audiohook.example.com/api/v1/voicebiometrics/ws',
      apiKey: DOC_KEY,
      clientSecret: DOC_SECRET,
      organizationId: DOC_HEADERS['audiohook-organization-id'],
      sessionId: DOC_HEADERS['audiohook-session-id'],
      correlationId: DOC_HEADERS['audiohook-correlation-id'],
      created: 1641013200,
      lifetimeS: 3282026430 - 1641013200,
      nonce: 'VGhpc0lzQVVuaXF1ZU5vbmNl',
    });
    expect(h['signature-input']).toBe(DOC_HEADERS['signature-input']);
    expect(h.signature).toBe(DOC_HEADERS.signature);
  });

  it('a key without a secret takes unsigned requests; another port in the URL is part of @authority', async () => {
    const { v } = verifier({ apiKeys: { plain: null } });
    expect(await v.check(request({ host: 'h', 'x-api-key': 'plain' }))).toBeUndefined();
    const local = verifier();
    expect(await local.v.check(request(signed({ url: 'ws://127.0.0.1:8123/ah?x=1' }), '/ah?x=1'))).toBeUndefined();
  });

  it('publicUrl: a proxy in front changed the Host and the path', async () => {
    const { v } = verifier({ publicUrl: 'wss://audiohook.example.com/api/v1/voicebiometrics/ws' });
    expect(await v.check(request({ ...DOC_HEADERS, host: '10.0.0.7:8080' }, '/internal'))).toBeUndefined();
  });

  const tamper = (name: string, value: string | undefined): Record<string, string> => {
    const h: Record<string, string> = { ...DOC_HEADERS };
    if (value === undefined) delete h[name];
    else h[name] = value;
    return h;
  };

  it.each(([
    ['no X-API-KEY', tamper('x-api-key', undefined), {}, 'missing_api_key'],
    ['a key not configured', tamper('x-api-key', 'other'), {}, 'unknown_api_key'],
    ['a key with a secret, unsigned', (({ signature: _s, 'signature-input': _i, ...rest }) => rest)(DOC_HEADERS), {}, 'unsigned'],
    ['a signed request for a key configured without a secret', DOC_HEADERS, { apiKeys: { [DOC_KEY]: '' } }, 'bad_signature'],
    ['another organization', DOC_HEADERS, { organizationIds: ['11111111-2222-4333-8444-555555555555'] }, 'bad_organization'],
    ['a covered header changed (the session id)', tamper('audiohook-session-id', '11111111-2222-4333-8444-555555555555'), {}, 'bad_signature'],
    ['another host', tamper('host', 'evil.example.com'), {}, 'bad_signature'],
    ['the wrong secret', signed({ secret: Buffer.from('another secret').toString('base64') }), {}, 'bad_signature'],
    ['a component left uncovered', tamper('signature-input', DOC_HEADERS['signature-input'].replace(' "x-api-key"', '')), {}, 'bad_signature'],
    ['another keyid', tamper('signature-input', DOC_HEADERS['signature-input'].replace('keyid="SGVs', 'keyid="XGVs')), {}, 'bad_signature'],
    ['another algorithm', tamper('signature-input', DOC_HEADERS['signature-input'].replace('hmac-sha256', 'rsa-pss-sha512')), {}, 'bad_signature'],
    ['a short nonce', signed({ nonce: 'short' }), {}, 'bad_signature'],
    ['a Signature that is not a structured field', tamper('signature', 'sig1=NZBw=='), {}, 'malformed_signature'],
    ['labels that do not match', tamper('signature', 'sig2=:AAE=:'), {}, 'malformed_signature'],
    ['refused by verify', DOC_HEADERS, { verify: () => false }, 'verify_failed'],
    ['verify throws', DOC_HEADERS, { verify: () => { throw new Error('x'); } }, 'verify_failed'],
  ] as const).map(([name, headers, auth, reason]) => ({ name, headers, auth, reason })))('$name: refused ($reason)', async ({ headers, auth, reason }) => {
    const { v } = verifier(auth as Partial<AudioHookAuth>);
    const failure = await v.check(request(headers as Record<string, string>));
    expect(failure?.reason).toBe(reason);
    // What a log line may show never holds the key or the secret.
    expect(failure?.detail).not.toContain(DOC_KEY);
    expect(failure?.detail).not.toContain(DOC_SECRET);
  });

  it('age and skew: at most 10 s old and 3 s ahead, on the injected clock', async () => {
    const created = DOC_CREATED_MS / 1000;
    const { v, at } = verifier();
    at((created + 13) * 1000);
    expect(await v.check(request(signed({ nonce: 'nonce-number-one-000000' })))).toBeUndefined();
    at((created + 14) * 1000);
    expect((await v.check(request(signed({ nonce: 'nonce-number-two-000000' }))))?.reason).toBe('expired_signature');
    at((created - 3) * 1000);
    expect(await v.check(request(signed({ nonce: 'nonce-number-three-0000' })))).toBeUndefined();
    at((created - 4) * 1000);
    expect((await v.check(request(signed({ nonce: 'nonce-number-four-00000' }))))?.reason).toBe('expired_signature');
  });

  it('a nonce is forgotten once its signature could no longer be used anyway', async () => {
    const created = DOC_CREATED_MS / 1000;
    const { v, at } = verifier({ maxSignatureAgeS: 10_000 });
    expect(await v.check(request(DOC_HEADERS))).toBeUndefined();
    at((created + 10_000 + 7) * 1000);
    // Old enough to be refused for its age, no longer for its nonce.
    expect((await v.check(request(DOC_HEADERS)))?.reason).toBe('expired_signature');
  });

  it('keys from a secrets store (a function, maybe async)', async () => {
    const { v } = verifier({ apiKeys: async (key) => (key === DOC_KEY ? DOC_SECRET : undefined) });
    expect(await v.check(request(DOC_HEADERS))).toBeUndefined();
    expect((await v.check(request(tamper('x-api-key', 'nope'))))?.reason).toBe('unknown_api_key');
  });
});
