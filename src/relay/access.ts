// Who may read the relay: the Origin allow-list (CORS) and the token check, as pure functions
// of a request's headers, so the rules are tested without a socket and live in one place.
import { createHash, timingSafeEqual } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';

/**
 * The relay's token check: one token, a list, a function deciding per token and session
 * (e.g. a token your app issued for one session), or `null` for no check (only behind another
 * guard, as the dashboard on loopback with its Host check).
 */
export type RelayTokenCheck = string | readonly string[] | ((token: string, sessionId: string | undefined) => boolean) | null;

/** The cookie a same-site page may carry the token in (with `credentials: 'include'`). */
export const RELAY_TOKEN_COOKIE = 'svc_relay_token';

/** Normalises an origin for comparison (`https://App.example.com:443` → `https://app.example.com`); undefined when it is not one. */
export function normaliseOrigin(origin: string): string | undefined {
  if (origin === 'null') return undefined;
  try {
    const u = new URL(origin);
    if ((u.protocol !== 'http:' && u.protocol !== 'https:') || u.pathname !== '/' || u.search || u.hash || u.username) return undefined;
    return u.origin;
  } catch {
    return undefined;
  }
}

/**
 * What the Origin header allows: `none` (no Origin: not a cross-origin browser request, e.g.
 * curl, a server, or a same-origin GET), `allowed` (on the list, or the relay's own origin),
 * `refused` (any other origin, including `null`).
 */
export function originDecision(headers: IncomingHttpHeaders, allowed: ReadonlySet<string>): { readonly kind: 'none' } | { readonly kind: 'allowed'; readonly origin: string } | { readonly kind: 'refused' } {
  const raw = headers.origin;
  if (raw === undefined) return { kind: 'none' };
  const origin = normaliseOrigin(raw);
  if (origin === undefined) return { kind: 'refused' };
  const host = headers.host?.toLowerCase();
  if (allowed.has(origin) || (host !== undefined && (origin === `http://${host}` || origin === `https://${host}`))) return { kind: 'allowed', origin };
  return { kind: 'refused' };
}

/** The token a request carries: `Authorization: Bearer T`, else the `token` query parameter, else the cookie. */
export function requestToken(headers: IncomingHttpHeaders, query: URLSearchParams): string | undefined {
  const auth = headers.authorization;
  if (auth !== undefined) {
    const m = /^Bearer\s+(\S+)\s*$/i.exec(auth);
    return m?.[1];
  }
  const q = query.get('token');
  if (q !== null) return q;
  for (const part of (headers.cookie ?? '').split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === RELAY_TOKEN_COOKIE) {
      try {
        return decodeURIComponent(part.slice(eq + 1).trim());
      } catch {
        return undefined;
      }
    }
  }
  return undefined;
}

const digest = (s: string): Buffer => createHash('sha256').update(s).digest();

/** True when `token` passes `check` (compared in constant time). */
export function tokenAllowed(check: RelayTokenCheck, token: string | undefined, sessionId: string | undefined): boolean {
  if (check === null) return true;
  if (token === undefined || token.length === 0) return false;
  if (typeof check === 'function') return check(token, sessionId) === true;
  const given = digest(token);
  const list = typeof check === 'string' ? [check] : check;
  let ok = false;
  for (const t of list) if (timingSafeEqual(given, digest(t))) ok = true;
  return ok;
}
