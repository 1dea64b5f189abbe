// Keeps secrets out of anything a user can see: messages, details, bodies, URLs, logs.
// Owns the rule for masking one text. It remembers nothing: each call, session or client
// passes the keys it was given to every error it builds (SvcErrorOptions.secrets).

/** Secrets at least this long are masked wherever they occur; shorter ones only as a whole token. */
const MASK_ANYWHERE_FROM = 8;

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/**
 * Replace every occurrence of each secret in `text` (as given and URL-encoded) with `***`.
 * A secret shorter than 8 characters (no issued key is) is masked only where it stands as a
 * whole token, not touching a letter or digit: masking a test key `k` inside every word would
 * garble messages without protecting anything.
 */
export function redact(text: string, secrets: readonly (string | undefined)[]): string {
  let out = text;
  for (const s of secrets) {
    if (!s) continue;
    const forms = new Set([s, encodeURIComponent(s)]);
    for (const form of forms) {
      if (!out.includes(form)) continue;
      if (form.length >= MASK_ANYWHERE_FROM) out = out.split(form).join('***');
      else out = out.replace(new RegExp(`(?<![A-Za-z0-9])${escapeRegExp(form)}(?![A-Za-z0-9])`, 'g'), '***');
    }
  }
  return out;
}

/** Whether `text` holds any of `secrets` in a form `redact` would mask. */
export function containsSecret(text: string, secrets: readonly (string | undefined)[]): boolean {
  return redact(text, secrets) !== text;
}

/**
 * `value` with every string inside it (array items, plain-object values and keys, to a depth
 * of 8) passed through `redact`. Returns `value` itself when nothing had to be masked.
 */
export function redactDeep<T>(value: T, secrets: readonly (string | undefined)[], depth = 8): T {
  if (secrets.length === 0) return value;
  if (typeof value === 'string') return redact(value, secrets) as T;
  if (depth <= 0 || value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) {
    let changed = false;
    const out = value.map((v: unknown) => {
      const r = redactDeep(v, secrets, depth - 1);
      if (r !== v) changed = true;
      return r;
    });
    return (changed ? out : value) as T;
  }
  const proto = Object.getPrototypeOf(value) as unknown;
  if (proto !== Object.prototype && proto !== null) return value;
  let changed = false;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
    const rk = redact(k, secrets);
    const rv = redactDeep(v, secrets, depth - 1);
    if (rk !== k || rv !== v) changed = true;
    out[rk] = rv;
  }
  return (changed ? out : value) as T;
}

/**
 * A URL with its `api_key` query value and its password masked, safe to show or log. Pure:
 * nothing is remembered; errors mask the keys their caller passes them.
 */
export function redactUrl(url: string | URL): string {
  const u = new URL(url.toString());
  if (u.searchParams.has('api_key')) u.searchParams.set('api_key', '***');
  if (u.password) u.password = '***';
  return u.toString().replace('api_key=%2A%2A%2A', 'api_key=***');
}
