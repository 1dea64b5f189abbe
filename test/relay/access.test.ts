// Who may read the relay, as pure functions of the headers: origins, tokens.
import { describe, expect, it } from 'vitest';
import { normaliseOrigin, originDecision, requestToken, tokenAllowed } from '../../src/relay/access.js';

describe('originDecision', () => {
  const allowed = new Set(['https://app.example.com', 'http://localhost:5173']);
  it.each([
    [{}, 'none'],
    [{ origin: 'https://app.example.com' }, 'allowed'],
    [{ origin: 'https://APP.example.com:443' }, 'allowed'],
    [{ origin: 'http://localhost:5173' }, 'allowed'],
    [{ origin: 'http://localhost:5174' }, 'refused'],
    [{ origin: 'http://app.example.com' }, 'refused'],
    [{ origin: 'null' }, 'refused'],
    [{ origin: 'file://' }, 'refused'],
    [{ origin: 'not a url' }, 'refused'],
    [{ origin: 'http://127.0.0.1:9000', host: '127.0.0.1:9000' }, 'allowed'], // the relay's own origin
  ])('%j → %s', (headers, kind) => {
    expect(originDecision(headers, allowed).kind).toBe(kind);
  });
  it('normalises or refuses', () => {
    expect(normaliseOrigin('https://a.test:443')).toBe('https://a.test');
    expect(normaliseOrigin('https://a.test/path')).toBeUndefined();
    expect(normaliseOrigin('ftp://a.test')).toBeUndefined();
  });
});

describe('requestToken and tokenAllowed', () => {
  it('reads the bearer header first, then the query, then the cookie', () => {
    const q = (s: string) => new URLSearchParams(s);
    expect(requestToken({ authorization: 'Bearer abc' }, q('token=zzz'))).toBe('abc');
    expect(requestToken({ authorization: 'Basic abc' }, q('token=zzz'))).toBeUndefined(); // a header that is not a bearer is not read past
    expect(requestToken({}, q('token=zzz'))).toBe('zzz');
    expect(requestToken({ cookie: 'a=1; svc_relay_token=c%20d' }, q(''))).toBe('c d');
    expect(requestToken({ cookie: 'svc_relay_token=%E0' }, q(''))).toBeUndefined();
    expect(requestToken({}, q(''))).toBeUndefined();
  });
  it('checks a token, a list, a function, or nothing', () => {
    expect(tokenAllowed('t1', 't1', undefined)).toBe(true);
    expect(tokenAllowed('t1', 't2', undefined)).toBe(false);
    expect(tokenAllowed('t1', undefined, undefined)).toBe(false);
    expect(tokenAllowed('', '', undefined)).toBe(false);
    expect(tokenAllowed(['a', 'b'], 'b', undefined)).toBe(true);
    expect(tokenAllowed((t, id) => t === `for-${id}`, 'for-x', 'x')).toBe(true);
    expect(tokenAllowed((t, id) => t === `for-${id}`, 'for-x', 'y')).toBe(false);
    expect(tokenAllowed(null, undefined, undefined)).toBe(true);
  });
});
