// The one rule for a session's id in the fleet and on a relay: it goes in a URL path
// (`/sessions/ID/events`) and in Redis keys. Checked by the relay, the publisher and the CLI;
// any name (a file's stem, a provider's call id) becomes an id by it.
import { InputError } from '../errors/index.js';

const SESSION_ID = /^[A-Za-z0-9._~:-]{1,128}$/;

/** True when `id` is a session id: 1 to 128 characters of `A-Z a-z 0-9 . _ ~ : -`. */
export function isSessionId(id: string): boolean {
  return SESSION_ID.test(id);
}

/** Checks a session id: 1 to 128 characters of `A-Z a-z 0-9 . _ ~ : -`; throws `InputError('invalid_argument')` (path `id`) otherwise. */
export function checkSessionId(id: string): void {
  if (!SESSION_ID.test(id)) throw new InputError('invalid_argument', `relay session id ${JSON.stringify(id.slice(0, 140))}: use 1 to 128 characters of A-Z a-z 0-9 . _ ~ : -`, { path: 'id' });
}

/** A session id made of any name (a file's stem, a provider's call id): characters other than `A-Z a-z 0-9 . _ ~ : -` become `-`, cut to 128. */
export function sessionIdOf(name: string): string {
  return name.replace(/[^A-Za-z0-9._~:-]+/g, '-').slice(0, 128) || 'session';
}
