import { describe, expect, it } from 'vitest';
import { parseDictionary, serializeInnerList, StructuredFieldError, Token, type InnerList, type Item } from '../../src/telephony/structuredFields.js';

describe('structured fields (RFC 8941): the dictionaries of HTTP message signatures', () => {
  it('reads a Signature-Input member: an inner list of strings with its parameters, in order', () => {
    const d = parseDictionary('sig1=("@request-target" "x-api-key");keyid="abc";nonce="n";alg="hmac-sha256";created=1641013200;expires=3282026430');
    const m = d.get('sig1') as InnerList;
    expect(m.items.map((i) => i.value)).toEqual(['@request-target', 'x-api-key']);
    expect(m.params).toEqual([['keyid', 'abc'], ['nonce', 'n'], ['alg', 'hmac-sha256'], ['created', 1641013200], ['expires', 3282026430]]);
    // Serialized back exactly: the @signature-params line of the signature base.
    expect(serializeInnerList(m)).toBe('("@request-target" "x-api-key");keyid="abc";nonce="n";alg="hmac-sha256";created=1641013200;expires=3282026430');
  });

  it('reads a Signature member (a byte sequence) and several members', () => {
    const d = parseDictionary('sig1=:NZBwyBHRRyRoeLqy1IzOa9VYBuI8TgMFt2GRDkDuJh4=:, sig2=:AAE=:');
    expect(Buffer.from((d.get('sig1') as Item).value as Uint8Array).toString('base64')).toBe('NZBwyBHRRyRoeLqy1IzOa9VYBuI8TgMFt2GRDkDuJh4=');
    expect([...((d.get('sig2') as Item).value as Uint8Array)]).toEqual([0, 1]);
  });

  it('tokens, booleans, decimals, escapes and bare keys', () => {
    const d = parseDictionary('a=tok/en, b=?0, c=-1.5, d="q\\"b\\\\", e;p');
    expect((d.get('a') as Item).value).toEqual(new Token('tok/en'));
    expect((d.get('b') as Item).value).toBe(false);
    expect((d.get('c') as Item).value).toBe(-1.5);
    expect((d.get('d') as Item).value).toBe('q"b\\');
    expect(d.get('e')).toEqual({ value: true, params: [['p', true]] });
    expect(serializeInnerList({ items: [{ value: 'q"b\\', params: [] }, { value: new Token('t'), params: [['x', true]] }], params: [['n', 2]] })).toBe('("q\\"b\\\\" t;x);n=2');
  });

  it.each([
    ['a trailing comma', 'a=1,'],
    ['an unterminated string', 'a="abc'],
    ['a bad escape', 'a="\\x"'],
    ['an upper-case key', 'A=1'],
    ['garbage after a member', 'a=1 b'],
    ['an unclosed inner list', 'a=("x"'],
    ['a number too long', 'a=1234567890123456'],
  ])('%s is refused', (_name, input) => {
    expect(() => parseDictionary(input)).toThrow(StructuredFieldError);
  });
});
