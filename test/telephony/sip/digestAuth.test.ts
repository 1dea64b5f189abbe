import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { digestAuthorization, DigestVerifier, parseDigest } from '../../../src/telephony/sip/digestAuth.js';

describe('DigestVerifier (RFC 2617, RFC 8760)', () => {
  const users = { alice: 'wonderland' };

  it('takes a right answer in SHA-256 or MD5, with qop=auth or without (RFC 2069 style)', () => {
    let now = 1_000_000;
    const v = new DigestVerifier({ users, realm: 'r' }, () => now);
    const [sha, md5] = v.challenges();
    expect(sha).toMatch(/^Digest realm="r", nonce="[^"]+", algorithm=SHA-256, qop="auth"$/);
    expect(v.verify('INVITE', digestAuthorization(sha!, 'INVITE', 'sip:x@y', 'alice', 'wonderland'))).toBeUndefined();
    expect(v.verify('INVITE', digestAuthorization(md5!, 'INVITE', 'sip:x@y', 'alice', 'wonderland'))).toBeUndefined();
    const nonce = parseDigest(md5!)!['nonce']!;
    const h = (s: string) => createHash('md5').update(s).digest('hex');
    const plain = h(`${h('alice:r:wonderland')}:${nonce}:${h('INVITE:sip:x@y')}`);
    expect(v.verify('INVITE', `Digest username="alice", realm="r", nonce="${nonce}", uri="sip:x@y", response="${plain}"`)).toBeUndefined();
    // The same answer for another method is wrong; after the nonce's life it is stale.
    expect(v.verify('BYE', digestAuthorization(sha!, 'INVITE', 'sip:x@y', 'alice', 'wonderland'))).toBe('wrong_password');
    now += 301_000;
    expect(v.verify('INVITE', digestAuthorization(sha!, 'INVITE', 'sip:x@y', 'alice', 'wonderland'))).toBe('stale_nonce');
    expect(v.challenges(true)[0]).toContain('stale=true');
  });

  it('refuses what is missing, forged or unknown, each by its reason', () => {
    const v = new DigestVerifier({ users: (u) => (u === 'bob' ? 'pw' : undefined) }, () => 5);
    const [c] = v.challenges();
    expect(v.verify('INVITE', undefined)).toBe('no_credentials');
    expect(v.verify('INVITE', 'Basic YWxpY2U6d29uZGVybGFuZA==')).toBe('bad_credentials');
    expect(v.verify('INVITE', digestAuthorization(c!, 'INVITE', 'sip:x@y', 'eve', 'pw'))).toBe('unknown_user');
    expect(v.verify('INVITE', digestAuthorization(c!, 'INVITE', 'sip:x@y', 'bob', 'nope'))).toBe('wrong_password');
    const forged = digestAuthorization(c!.replace(/nonce="[^"]+"/, 'nonce="5.AAAAAAAAAAAAAAAAAAAAAA"'), 'INVITE', 'sip:x@y', 'bob', 'pw');
    expect(v.verify('INVITE', forged)).toBe('bad_credentials');
    const other = new DigestVerifier({ users: { bob: 'pw' } }, () => 5);
    expect(other.verify('INVITE', digestAuthorization(c!, 'INVITE', 'sip:x@y', 'bob', 'pw'))).toBe('bad_credentials');
  });
});
