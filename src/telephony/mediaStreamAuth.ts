// Who may open a media stream: a shared token, Twilio's request signature, or a check of your
// own, all decided on the HTTP upgrade request before any WebSocket exists.
import { createHmac, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';

/**
 * The checks a `mediaStreamServer` runs on each upgrade request. Every check that is set must
 * pass; a request that fails one is answered `401` and never becomes a WebSocket.
 */
export interface MediaStreamAuth {
  /**
   * A shared secret the client presents as `Authorization: Bearer <token>` or as the `token`
   * query parameter (for providers whose stream URL can carry one; Twilio's cannot: use `twilio`).
   */
  readonly token?: string | undefined;
  /**
   * Verify Twilio's `X-Twilio-Signature`: base64 HMAC-SHA1, keyed with the account's auth token,
   * of the URL Twilio called (a WebSocket upgrade is a GET, so there are no POST parameters).
   */
  readonly twilio?:
    | {
        readonly authToken: string;
        /**
         * The public URL of the stream, exactly as in the TwiML `<Stream url>` (needed behind a
         * proxy or TLS terminator). Default: `wss://` + the `Host` header + the request path.
         */
        readonly url?: string | ((req: IncomingMessage) => string) | undefined;
      }
    | undefined;
  /** Your own check, run after the others; resolve `true` to admit. A throw refuses. */
  readonly verify?: ((req: IncomingMessage) => boolean | Promise<boolean>) | undefined;
}

/** Why an upgrade was refused (counted in `stats.unauthorized`, told to `onRefused`). */
export type MediaStreamRefusal = 'bad_token' | 'bad_signature' | 'verify_failed';

/**
 * Twilio's request signature: HMAC-SHA1 keyed with the auth token over the full URL followed
 * by every POST parameter, sorted by name, as name and value with no separators; base64.
 * For a WebSocket upgrade (a GET) there are no parameters: the signature covers the URL alone.
 */
export function twilioSignature(authToken: string, url: string, params: Readonly<Record<string, string>> = {}): string {
  const data = Object.keys(params)
    .sort()
    .reduce((acc, k) => acc + k + params[k], url);
  return createHmac('sha1', authToken).update(Buffer.from(data, 'utf8')).digest('base64');
}

/** Compare secrets in constant time (for equal lengths; a length difference says only that). */
function sameSecret(given: string, expected: string): boolean {
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}

/** The URL as given, and with the default port added or removed (Twilio's helpers accept both). */
function urlVariants(url: string): string[] {
  // By hand: URL() drops a default port, and the signed string is the one written.
  const m = /^(wss?|https?):\/\/([^/:?#]+)(?::(\d+))?(.*)$/i.exec(url);
  if (!m) return [url];
  const [, scheme, host, port, rest] = m;
  const standard = /^(wss|https)$/i.test(scheme!) ? '443' : '80';
  if (port === undefined) return [url, `${scheme}://${host}:${standard}${rest}`];
  if (port === standard) return [url, `${scheme}://${host}${rest}`];
  return [url];
}

function header(req: IncomingMessage, name: string): string | undefined {
  const v = req.headers[name];
  return Array.isArray(v) ? v[0] : v;
}

/** True when `signature` is Twilio's signature of `url` (a GET: no parameters) under `authToken`. */
export function verifyTwilioSignature(authToken: string, signature: string | undefined, url: string): boolean {
  if (!signature) return false;
  return urlVariants(url).some((u) => sameSecret(signature, twilioSignature(authToken, u)));
}

/** Run every configured check on an upgrade request: undefined admits, otherwise why not. */
export async function checkUpgrade(req: IncomingMessage, auth: MediaStreamAuth): Promise<MediaStreamRefusal | undefined> {
  if (auth.token !== undefined) {
    const bearer = /^Bearer\s+(.+)$/i.exec(header(req, 'authorization') ?? '')?.[1]?.trim();
    const query = new URL(req.url ?? '/', 'http://bridge').searchParams.get('token') ?? undefined;
    const given = bearer ?? query;
    if (given === undefined || !sameSecret(given, auth.token)) return 'bad_token';
  }
  if (auth.twilio) {
    const { authToken, url } = auth.twilio;
    const expected = typeof url === 'function' ? url(req) : url ?? `wss://${header(req, 'host') ?? ''}${req.url ?? '/'}`;
    if (!verifyTwilioSignature(authToken, header(req, 'x-twilio-signature'), expected)) return 'bad_signature';
  }
  if (auth.verify) {
    let ok = false;
    try {
      ok = (await auth.verify(req)) === true;
    } catch {
      ok = false;
    }
    if (!ok) return 'verify_failed';
  }
  return undefined;
}
