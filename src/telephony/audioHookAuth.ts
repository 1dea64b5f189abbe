// Who may open an AudioHook stream, decided on the HTTP upgrade request as Genesys sends it:
// the X-API-KEY header, and the HTTP message signature (RFC 9421, HMAC-SHA256) keyed with the
// key's client secret: covered components, age, clock skew, a nonce never seen twice.
import { createHmac, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { InputError } from '../errors/index.js';
import { isInnerList, parseDictionary, serializeInnerList, StructuredFieldError, Token, type InnerList } from './structuredFields.js';

/** The components Genesys signs, each of which a signature must cover. */
export const AUDIOHOOK_SIGNED_COMPONENTS = ['@request-target', '@authority', 'audiohook-organization-id', 'audiohook-session-id', 'audiohook-correlation-id', 'x-api-key'] as const;

/** Largest age of a signature by default, s (`created` to now). */
export const DEFAULT_AUDIOHOOK_MAX_SIGNATURE_AGE_S = 10;
/** Clock difference allowed between Genesys and this server by default, s. */
export const DEFAULT_AUDIOHOOK_CLOCK_SKEW_S = 3;
/** Shortest time to a refusal by default, ms: no failure is answered sooner, whatever failed. */
export const DEFAULT_AUDIOHOOK_MIN_FAILURE_DELAY_MS = 500;
/** Nonces remembered at most (each until its signature could no longer be used). */
const MAX_NONCES = 100_000;
/** A nonce shorter than this is refused (Genesys sends 24 characters: 18 random bytes in base64). */
const MIN_NONCE_LENGTH = 22;

/**
 * The checks an `audioHookServer` runs on each upgrade request. A request that fails one is
 * answered `401`, never sooner than `minFailureDelayMs` after it arrived, and never becomes a
 * WebSocket.
 */
export interface AudioHookAuth {
  /**
   * The API keys Genesys may present (`X-API-KEY`), each with its client secret as the Genesys
   * console shows it (base64), or `''`/`null` for a key whose requests are not signed. A key with
   * a secret must come with a valid signature; a key without one must come unsigned. Or a
   * function (a secrets store): the secret of a key, `undefined` when the key is unknown.
   */
  readonly apiKeys: Readonly<Record<string, string | null>> | ((apiKey: string) => string | null | undefined | Promise<string | null | undefined>);
  /** Only these organizations (`Audiohook-Organization-Id`; default any). */
  readonly organizationIds?: readonly string[] | undefined;
  /** Largest age of a signature, s (default 10). */
  readonly maxSignatureAgeS?: number | undefined;
  /** Clock difference allowed, s (default 3). */
  readonly clockSkewS?: number | undefined;
  /** No refusal is answered sooner than this after the request arrived, ms (default 500). */
  readonly minFailureDelayMs?: number | undefined;
  /**
   * The URL Genesys is configured with (`wss://host/path`), when a proxy in front changes the
   * `Host` or the path: `@authority` and `@request-target` are then taken from it. Default: the
   * request's `Host` header and its path as received.
   */
  readonly publicUrl?: string | undefined;
  /** Your own check, run after the others; resolve `true` to admit. A throw refuses. */
  readonly verify?: ((req: IncomingMessage) => boolean | Promise<boolean>) | undefined;
}

/** Why an upgrade was refused (counted in `stats.unauthorized`, told to `onRefused`; never the key itself). */
export type AudioHookRefusal =
  | 'missing_api_key'
  | 'unknown_api_key'
  | 'unsigned'
  | 'malformed_signature'
  | 'bad_signature'
  | 'expired_signature'
  | 'replayed_nonce'
  | 'bad_organization'
  | 'verify_failed';

/** A refusal and what failed, in words safe for a log. */
export interface AudioHookAuthFailure {
  readonly reason: AudioHookRefusal;
  readonly detail: string;
}

/** The clock in seconds, and the nonces seen. Made once per server. */
export class AudioHookVerifier {
  private readonly nonces = new Map<string, number>();
  private readonly maxAgeS: number;
  private readonly skewS: number;
  private readonly orgs: ReadonlySet<string> | undefined;

  constructor(
    private readonly auth: AudioHookAuth,
    /** Now, in ms since the epoch (the server's scheduler). */
    private readonly now: () => number,
  ) {
    this.maxAgeS = auth.maxSignatureAgeS ?? DEFAULT_AUDIOHOOK_MAX_SIGNATURE_AGE_S;
    this.skewS = auth.clockSkewS ?? DEFAULT_AUDIOHOOK_CLOCK_SKEW_S;
    this.orgs = auth.organizationIds ? new Set(auth.organizationIds.map((o) => o.toLowerCase())) : undefined;
    if (auth.publicUrl !== undefined && !URL.canParse(auth.publicUrl)) throw new InputError('invalid_argument', `audioHookServer: authenticate.publicUrl is not a URL: ${auth.publicUrl}`, { path: 'authenticate.publicUrl' });
  }

  /** Undefined admits; otherwise why not. */
  async check(req: IncomingMessage): Promise<AudioHookAuthFailure | undefined> {
    const apiKey = header(req, 'x-api-key');
    if (apiKey === undefined || apiKey === '') return fail('missing_api_key', 'no X-API-KEY header');
    const secret = await this.secretOf(apiKey);
    if (secret === undefined) return fail('unknown_api_key', 'the X-API-KEY is not one of the keys configured');
    if (this.orgs && !this.orgs.has((header(req, 'audiohook-organization-id') ?? '').toLowerCase())) return fail('bad_organization', 'the Audiohook-Organization-Id is not one of the organizations configured');
    const signed = req.headers['signature-input'] !== undefined || req.headers['signature'] !== undefined;
    if (secret === null || secret === '') {
      if (signed) return fail('bad_signature', 'the request is signed, but no client secret is configured for its key');
    } else {
      if (!signed) return fail('unsigned', 'the key has a client secret, but the request carries no Signature and Signature-Input');
      const failure = this.verifySignature(req, apiKey, Buffer.from(secret, 'base64'));
      if (failure) return failure;
    }
    if (this.auth.verify) {
      let ok = false;
      try {
        ok = (await this.auth.verify(req)) === true;
      } catch {
        ok = false;
      }
      if (!ok) return fail('verify_failed', 'refused by verify');
    }
    return undefined;
  }

  private async secretOf(apiKey: string): Promise<string | null | undefined> {
    const keys = this.auth.apiKeys;
    if (typeof keys === 'function') return keys(apiKey);
    return Object.prototype.hasOwnProperty.call(keys, apiKey) ? keys[apiKey] : undefined;
  }

  private verifySignature(req: IncomingMessage, apiKey: string, key: Buffer): AudioHookAuthFailure | undefined {
    let inputs;
    let signatures;
    try {
      inputs = parseDictionary(header(req, 'signature-input') ?? '');
      signatures = parseDictionary(header(req, 'signature') ?? '');
    } catch (err) {
      if (err instanceof StructuredFieldError) return fail('malformed_signature', `Signature or Signature-Input is not a structured field: ${err.message}`);
      throw err;
    }
    // Genesys sends one signature (`sig1`): the first label that has both.
    const label = [...inputs.keys()].find((l) => signatures.has(l));
    if (label === undefined) return fail('malformed_signature', 'no label is in both Signature-Input and Signature');
    const input = inputs.get(label)!;
    const sig = signatures.get(label)!;
    if (!isInnerList(input) || isInnerList(sig) || !(sig.value instanceof Uint8Array)) return fail('malformed_signature', `signature ${label}: Signature-Input must be an inner list and Signature a byte sequence`);
    const params = new Map(input.params);
    const keyid = params.get('keyid');
    const alg = params.get('alg');
    const created = params.get('created');
    const expires = params.get('expires');
    const nonce = params.get('nonce');
    if (typeof keyid !== 'string' || !sameSecret(keyid, apiKey)) return fail('bad_signature', 'the signature keyid is not the X-API-KEY');
    if (alg !== undefined && alg !== 'hmac-sha256' && !(alg instanceof Token && alg.value === 'hmac-sha256')) return fail('bad_signature', 'the signature alg is not hmac-sha256');
    if (typeof created !== 'number' || !Number.isInteger(created)) return fail('bad_signature', 'the signature has no created time');
    if (expires !== undefined && (typeof expires !== 'number' || !Number.isInteger(expires))) return fail('bad_signature', 'the signature expires is not an integer');
    if (typeof nonce !== 'string' || nonce.length < MIN_NONCE_LENGTH) return fail('bad_signature', `the signature has no nonce of at least ${MIN_NONCE_LENGTH} characters`);
    const nowS = this.now() / 1000;
    if (created > nowS + this.skewS) return fail('expired_signature', `the signature was created ${Math.round(created - nowS)} s in the future (clock skew over ${this.skewS} s)`);
    if (nowS - created > this.maxAgeS + this.skewS) return fail('expired_signature', `the signature is ${Math.round(nowS - created)} s old (at most ${this.maxAgeS} s)`);
    if (expires !== undefined && (expires as number) + this.skewS < nowS) return fail('expired_signature', 'the signature has expired');
    const covered = input.items.map((i) => i.value);
    const missing = AUDIOHOOK_SIGNED_COMPONENTS.filter((c) => !covered.includes(c));
    if (missing.length > 0) return fail('bad_signature', `the signature does not cover ${missing.join(', ')}`);
    const base = this.signatureBase(req, input);
    if (typeof base !== 'string') return base;
    const expected = createHmac('sha256', key).update(base).digest();
    const given = Buffer.from(sig.value);
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) return fail('bad_signature', 'the signature does not match');
    // Only a valid signature's nonce is remembered (a forged one must not evict real ones).
    const nonceKey = `${apiKey}\n${nonce}`;
    const nowMs = this.now();
    if ((this.nonces.get(nonceKey) ?? -Infinity) >= nowMs) return fail('replayed_nonce', 'the signature nonce was used before');
    this.remember(nonceKey, (created + this.maxAgeS + 2 * this.skewS) * 1000, nowMs);
    return undefined;
  }

  /** The signature base of RFC 9421 §2.5 for the covered components, or why it cannot be built. */
  private signatureBase(req: IncomingMessage, input: InnerList): string | AudioHookAuthFailure {
    const lines: string[] = [];
    const seen = new Set<string>();
    const publicUrl = this.auth.publicUrl !== undefined ? new URL(this.auth.publicUrl) : undefined;
    for (const item of input.items) {
      const name = item.value;
      if (typeof name !== 'string' || item.params.length > 0) return fail('bad_signature', 'a covered component is not a plain name (component parameters are not supported)');
      if (seen.has(name)) return fail('bad_signature', `the component ${name} is covered twice`);
      seen.add(name);
      let value: string | undefined;
      if (name === '@request-target') value = publicUrl ? publicUrl.pathname + publicUrl.search : req.url;
      else if (name === '@authority') value = (publicUrl ? publicUrl.host : header(req, 'host'))?.toLowerCase();
      else if (name === '@method') value = req.method;
      else if (name.startsWith('@')) return fail('bad_signature', `the derived component ${name} is not supported`);
      else value = header(req, name);
      if (value === undefined) return fail('bad_signature', `the covered component ${name} is not in the request`);
      lines.push(`"${name}": ${value}`);
    }
    lines.push(`"@signature-params": ${serializeInnerList(input)}`);
    return lines.join('\n');
  }

  private remember(nonceKey: string, untilMs: number, nowMs: number): void {
    if (this.nonces.size >= MAX_NONCES) {
      for (const [k, until] of this.nonces) if (until < nowMs) this.nonces.delete(k);
      // Still full of live nonces: the oldest goes (insertion order is time order).
      if (this.nonces.size >= MAX_NONCES) this.nonces.delete(this.nonces.keys().next().value!);
    }
    this.nonces.set(nonceKey, untilMs);
  }
}

function fail(reason: AudioHookRefusal, detail: string): AudioHookAuthFailure {
  return { reason, detail };
}

/** A header's value, canonicalized as RFC 9421 §2.1 says (trimmed; repeated fields joined with `, `). */
function header(req: IncomingMessage, name: string): string | undefined {
  const v = req.headers[name];
  if (v === undefined) return undefined;
  return (Array.isArray(v) ? v : [v]).map((x) => x.trim().replace(/[ \t]*\r\n[ \t]+/g, ' ')).join(', ');
}

function sameSecret(given: string, expected: string): boolean {
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}

/** What {@link audioHookSignatureHeaders} signs: the request as Genesys would make it. */
export interface AudioHookSignatureRequest {
  /** `wss://host[:port]/path?query` of the server. */
  readonly url: string;
  readonly apiKey: string;
  /** The client secret, base64 as the Genesys console shows it. Without one, the request is not signed. */
  readonly clientSecret?: string | undefined;
  readonly organizationId: string;
  readonly sessionId: string;
  readonly correlationId: string;
  /** Seconds since the epoch (default now). */
  readonly created?: number | undefined;
  /** Lifetime after `created`, s (default 30). */
  readonly lifetimeS?: number | undefined;
  /** At least 22 characters (default 18 random bytes in base64, as Genesys sends). */
  readonly nonce?: string | undefined;
}

/**
 * The headers Genesys Cloud sends on an AudioHook upgrade request, signed as it signs them:
 * `Audiohook-Organization-Id`, `-Session-Id`, `-Correlation-Id`, `X-API-KEY`, and with a
 * client secret `Signature-Input` and `Signature` (RFC 9421, HMAC-SHA256 over the six
 * components in {@link AUDIOHOOK_SIGNED_COMPONENTS}). For a client of your own, or to test a
 * server's setup.
 */
export function audioHookSignatureHeaders(r: AudioHookSignatureRequest): Record<string, string> {
  const url = new URL(r.url);
  const headers: Record<string, string> = {
    'audiohook-organization-id': r.organizationId,
    'audiohook-session-id': r.sessionId,
    'audiohook-correlation-id': r.correlationId,
    'x-api-key': r.apiKey,
  };
  if (!r.clientSecret) return headers;
  const created = Math.floor(r.created ?? Date.now() / 1000);
  const input: InnerList = {
    items: AUDIOHOOK_SIGNED_COMPONENTS.map((c) => ({ value: c, params: [] })),
    params: [
      ['keyid', r.apiKey],
      ['nonce', r.nonce ?? randomNonce()],
      ['alg', 'hmac-sha256'],
      ['created', created],
      ['expires', created + (r.lifetimeS ?? 30)],
    ],
  };
  const values: Record<(typeof AUDIOHOOK_SIGNED_COMPONENTS)[number], string> = {
    '@request-target': url.pathname + url.search,
    '@authority': url.host,
    'audiohook-organization-id': r.organizationId,
    'audiohook-session-id': r.sessionId,
    'audiohook-correlation-id': r.correlationId,
    'x-api-key': r.apiKey,
  };
  const base = [...AUDIOHOOK_SIGNED_COMPONENTS.map((c) => `"${c}": ${values[c]}`), `"@signature-params": ${serializeInnerList(input)}`].join('\n');
  const signature = createHmac('sha256', Buffer.from(r.clientSecret, 'base64')).update(base).digest('base64');
  return { ...headers, 'signature-input': `sig1=${serializeInnerList(input)}`, signature: `sig1=:${signature}:` };
}

function randomNonce(): string {
  // 18 bytes: 24 characters of base64, as Genesys sends.
  return Buffer.from(globalThis.crypto.getRandomValues(new Uint8Array(18))).toString('base64');
}
