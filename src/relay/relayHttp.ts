// What every request of the relay's client shares: its headers (what it accepts, the token)
// and a refusal (status and body) read into the library's one HTTP error.
import { errorFromHttp, type SvcError } from '../errors/index.js';

/** The request headers of a client: what it accepts, and the token as a bearer when there is one. */
export function relayHeaders(accept: string, token: string | undefined): Record<string, string> {
  const headers: Record<string, string> = { accept };
  if (token !== undefined) headers['authorization'] = `Bearer ${token}`;
  return headers;
}

/** A refusal by the relay (status and body), through the library's one HTTP error factory. */
export function relayHttpError(status: number, body: string): SvcError {
  let parsed: unknown = body;
  try {
    parsed = JSON.parse(body);
  } catch {
    // not the relay's JSON; the status says enough
  }
  return errorFromHttp(status, parsed, 'the relay');
}
