import { describe, expect, it } from 'vitest';
import { DEFAULT_SIP_LIMITS, parseNameAddr, parseSipMessage, parseVia, SipParseError, splitList, uriHostPort, writeResponse, type SipRequest } from '../../../src/telephony/sip/sipMessage.js';
import { TORTURE } from '../fixtures/sip/rfc4475.js';

function refusal(bytes: Buffer, limits = DEFAULT_SIP_LIMITS, stream = false): string {
  try {
    parseSipMessage(bytes, limits, stream);
    return 'valid';
  } catch (err) {
    if (err instanceof SipParseError) return err.reason;
    throw err;
  }
}

describe('parseSipMessage: the RFC 4475 torture messages', () => {
  it.each(TORTURE.map((t) => [t.name, t] as const))('%s', (_name, t) => {
    expect(refusal(t.bytes)).toBe(t.expect);
  });

  it('reads the short tortuous INVITE (wsinv) as the RFC says', () => {
    const m = parseSipMessage(TORTURE.find((t) => t.name === 'wsinv')!.bytes) as SipRequest;
    expect(m.kind).toBe('request');
    expect(m.method).toBe('INVITE');
    expect(m.uri).toBe('sip:vivekg@chair-dnrc.example.com;unknownparam');
    expect(m.to.uri).toBe('sip:vivekg@chair-dnrc.example.com');
    expect(m.to.params['tag']).toBe('1918181833n');
    expect(m.from.displayName).toBe('J Rosenberg \\"');
    expect(m.from.params['tag']).toBe('98asjd8');
    expect(m.cseq).toEqual({ seq: 9, method: 'INVITE' });
    expect(m.headers.get('max-forwards')).toBe('0068');
    expect(m.headers.list('via').map((v) => parseVia(v))).toMatchObject([
      { transport: 'UDP', host: '192.0.2.2', params: { branch: '390skdjuw' } },
      { transport: 'TCP', host: 'spindle.example.com', params: { branch: 'z9hG4bK9ikj8' } },
      { transport: 'UDP', host: '192.168.255.111', params: { branch: 'z9hG4bK30239' } },
    ]);
    expect(m.headers.get('subject')).toBe('');
    expect(m.headers.get('NewFangledHeader')).toBe('newfangled value continued newfangled value');
    expect(m.headers.get('UnknownHeaderWithUnusualValue')).toBe(';;,,;;,;');
    expect(parseNameAddr(m.headers.get('contact')!)).toMatchObject({ displayName: 'Quoted string ""', uri: 'sip:jdrosen@example.com', params: { newparam: 'newvalue', secondparam: '', q: '0.33' } });
    expect(m.body.length).toBe(150);
  });

  it('reads the wide range of characters (intmeth) and unusual reason phrases', () => {
    const m = parseSipMessage(TORTURE.find((t) => t.name === 'intmeth')!.bytes) as SipRequest;
    expect(m.method).toBe("!interesting-Method0123456789_*+`.%indeed'~");
    expect(m.to.displayName).toBe('BEL:\x07 NUL:\x00 DEL:\x7F');
    expect(m.from.displayName).toBe("token1~` token2'+_ token3*%!.-");
    expect(m.from.params['tag']).toBe("_token~1'+`*%!-.");
    const r = parseSipMessage(TORTURE.find((t) => t.name === 'unreason')!.bytes);
    expect(r).toMatchObject({ kind: 'response', status: 200 });
    expect(parseSipMessage(TORTURE.find((t) => t.name === 'noreason')!.bytes)).toMatchObject({ kind: 'response', status: 100, reason: '' });
  });

  it('takes the first request of a datagram that holds two (dblreq), cut at its Content-Length', () => {
    const m = parseSipMessage(TORTURE.find((t) => t.name === 'dblreq')!.bytes) as SipRequest;
    expect(m.method).toBe('REGISTER');
    expect(m.body.length).toBe(0);
  });
});

describe('parseSipMessage: bounds', () => {
  const options = (extra: string[] = [], body = ''): Buffer =>
    Buffer.from(['OPTIONS sip:a@example.com SIP/2.0', 'Via: SIP/2.0/UDP 192.0.2.1;branch=z9hG4bKx', 'From: <sip:b@example.com>;tag=1', 'To: <sip:a@example.com>', 'Call-ID: bounds', 'CSeq: 1 OPTIONS', ...extra, `Content-Length: ${Buffer.byteLength(body)}`, '', body].join('\r\n'));

  it('refuses a message over maxMessageBytes, a line over maxLineLength, more than maxHeaders fields', () => {
    expect(refusal(options([], 'x'.repeat(70_000)))).toBe('too_large');
    expect(refusal(options([`X-Long: ${'y'.repeat(9000)}`]))).toBe('line_too_long');
    expect(refusal(options(Array.from({ length: 120 }, (_, i) => `X-H${i}: v`)))).toBe('too_many_headers');
    expect(refusal(options(), { maxMessageBytes: 100, maxLineLength: 80, maxHeaders: 5 })).toBe('too_large');
  });

  it('needs Content-Length on a stream transport, and refuses bytes that are not a head', () => {
    expect(refusal(Buffer.from(options().toString().replace(/Content-Length: 0\r\n/, '')), DEFAULT_SIP_LIMITS, true)).toBe('bad_content_length');
    expect(refusal(Buffer.from('\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03'))).toBe('bad_header');
    expect(refusal(Buffer.from('GET / HTTP/1.1\r\nHost: x\r\n\r\n'))).toBe('bad_start_line');
    expect(refusal(Buffer.from('OPTIONS sip:a@b SIP/2.0\r\nHost: x\r\n\r\n'))).toBe('missing_header');
  });
});

describe('header values', () => {
  it('splits lists outside quotes and brackets', () => {
    expect(splitList('"a, b" <sip:x@y;a=1,2>, <sip:z@w>')).toEqual(['"a, b" <sip:x@y;a=1,2>', '<sip:z@w>']);
  });

  it('reads a URI host, port and transport', () => {
    expect(uriHostPort('sip:alice@192.0.2.4:5070;transport=TCP')).toEqual({ host: '192.0.2.4', port: 5070, transport: 'tcp' });
    expect(uriHostPort('sip:[2001:db8::1]')).toEqual({ host: '2001:db8::1', port: undefined, transport: undefined });
  });

  it('writes a response with the request Vias, a To tag and Content-Length last', () => {
    const req = parseSipMessage(TORTURE.find((t) => t.name === 'transports')!.bytes) as SipRequest;
    const text = writeResponse(req, 200, [['Allow', 'INVITE']], undefined, 'abc').toString();
    expect(text.split('\r\n').slice(0, 6)).toEqual(['SIP/2.0 200 OK', 'Via: SIP/2.0/UDP t1.example.com;branch=z9hG4bKkdjuw', 'Via: SIP/2.0/SCTP t2.example.com;branch=z9hG4bKklasjdhf', 'Via: SIP/2.0/TLS t3.example.com;branch=z9hG4bK2980unddj', 'Via: SIP/2.0/UNKNOWN t4.example.com;branch=z9hG4bKasd0f3en', 'Via: SIP/2.0/TCP t5.example.com;branch=z9hG4bK0a9idfnee']);
    expect(text).toContain('To: sip:user@example.com;tag=abc\r\n');
    expect(text.endsWith('Allow: INVITE\r\nContent-Length: 0\r\n\r\n')).toBe(true);
    expect(parseSipMessage(Buffer.from(text))).toMatchObject({ kind: 'response', status: 200 });
  });
});
