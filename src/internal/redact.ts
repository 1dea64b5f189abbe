// Keeps secrets out of anything a user can see: messages, URLs, logs.

/** Replace every occurrence of each secret in `text` with `***`. */
export function redact(text: string, secrets: readonly (string | undefined)[]): string {
  let out = text;
  for (const s of secrets) {
    if (s && s.length > 0) out = out.split(s).join('***');
    if (s && s.length > 0) {
      const enc = encodeURIComponent(s);
      if (enc !== s) out = out.split(enc).join('***');
    }
  }
  return out;
}

/** A URL with its `api_key` query value masked, safe to show or log. */
export function redactUrl(url: string | URL): string {
  const u = new URL(url.toString());
  if (u.searchParams.has('api_key')) u.searchParams.set('api_key', '***');
  if (u.password) u.password = '***';
  return u.toString().replace('api_key=%2A%2A%2A', 'api_key=***');
}
