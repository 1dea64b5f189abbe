// The sender check: addresses (IPv4-mapped IPv6 is its IPv4 address, case folded), a
// predicate (a throw refuses), or none (every sender).
import type dgram from 'node:dgram';
import { describe, expect, it } from 'vitest';
import { plainAddress, sourceFilter } from '../../src/telephony/allowedSources.js';

const from = (address: string, port = 5004) => ({ address, port, family: 'IPv4', size: 0 }) as dgram.RemoteInfo;

describe('allowedSources', () => {
  it('an address list takes its senders in either form and refuses the rest', () => {
    const allow = sourceFilter(['10.0.0.5', 'FE80::1'])!;
    expect(allow(from('10.0.0.5'))).toBe(true);
    expect(allow(from('::ffff:10.0.0.5'))).toBe(true);
    expect(allow(from('fe80::1'))).toBe(true);
    expect(allow(from('10.0.0.6'))).toBe(false);
    expect(plainAddress('::ffff:1.2.3.4')).toBe('1.2.3.4');
  });

  it('a predicate sees address and port; one that throws refuses; none takes all', () => {
    const allow = sourceFilter((r) => {
      if (r.port === 1) throw new Error('no');
      return r.port === 5004;
    })!;
    expect(allow(from('1.1.1.1'))).toBe(true);
    expect(allow(from('1.1.1.1', 5005))).toBe(false);
    expect(allow(from('1.1.1.1', 1))).toBe(false);
    expect(sourceFilter(undefined)).toBeUndefined();
  });
});
