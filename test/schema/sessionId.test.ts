// The one session id rule: what the relay, the publisher and the CLI accept, and how a name becomes an id.
import { describe, expect, it } from 'vitest';
import { checkSessionId, sessionIdOf } from '../../src/schema/sessionId.js';

describe('session ids', () => {
  it('takes 1 to 128 characters of A-Z a-z 0-9 . _ ~ : - and refuses anything else, typed', () => {
    for (const ok of ['a', 'call-17', 'CA1234.x_y~z:1', 'x'.repeat(128)]) expect(() => checkSessionId(ok)).not.toThrow();
    for (const bad of ['', 'a b', 'a/b', 'é', 'x'.repeat(129), '../etc']) {
      expect(() => checkSessionId(bad)).toThrow(expect.objectContaining({ code: 'invalid_argument', path: 'id' }));
    }
  });

  it('makes an id of any name: runs of other characters become one -, cut to 128, never empty', () => {
    expect(sessionIdOf('call one (2).wav')).toBe('call-one-2-.wav');
    expect(sessionIdOf('CA1234:leg~a')).toBe('CA1234:leg~a');
    expect(sessionIdOf('é')).toBe('-');
    expect(sessionIdOf('')).toBe('session');
    expect(sessionIdOf('y'.repeat(300))).toHaveLength(128);
    for (const name of ['call one.wav', 'ü/ß', '', 'z'.repeat(200)]) expect(() => checkSessionId(sessionIdOf(name))).not.toThrow();
  });
});
