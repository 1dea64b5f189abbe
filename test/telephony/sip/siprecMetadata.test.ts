import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { readSiprecMetadata, readXml, senderOf, SiprecError, splitMultipart } from '../../../src/telephony/sip/siprecMetadata.js';

const METADATA = readFileSync(new URL('../fixtures/sip/rs-metadata.xml', import.meta.url), 'utf8');

describe('readSiprecMetadata (RFC 7865, the example of RFC 7866)', () => {
  it('reads the session, the participants with their AoR and name, and which stream each sends', () => {
    const m = readSiprecMetadata(METADATA);
    expect(m.sessionId).toBe('hVpd7YQgRW2nD22h7q60JQ==');
    expect(m.groupId).toBe('7+OTCyoxTmqmqyA/1weDAg==');
    expect(m.sipSessionIds).toEqual(['ab30317f1a784dc48ff824d0d3715d86;remote=47755a9de7794ba387653f2099600ef2']);
    expect(m.participants).toEqual([
      { id: 'srfBElmCRp2QB23b7Mpk0w==', name: 'Bob', aor: 'sip:bob@biloxi.com', sends: ['i1Pz3to5hGk8fuXl+PbwCw=='] },
      { id: 'zSfPoSvdSDCmU3A3TRDxAw==', name: 'Alice', aor: 'sip:alice@atlanta.com', sends: ['UAAMm5GRQKSCMVvLyl4rFw=='] },
    ]);
    expect(senderOf(m, '1')?.name).toBe('Alice');
    expect(senderOf(m, '2')?.name).toBe('Bob');
    expect(senderOf(m, '3')).toBeUndefined();
  });

  it('refuses a DTD, an entity of its own, an unbalanced document, and bounds size and depth', () => {
    const xxe = `<?xml version="1.0"?><!DOCTYPE r [<!ENTITY x SYSTEM "file:///etc/passwd">]><recording>&x;</recording>`;
    expect(() => readSiprecMetadata(xxe)).toThrow(SiprecError);
    expect(() => readXml('<recording>&lol;</recording>')).toThrow(/predefined/);
    expect(readXml('<a t="&lt;&#65;&#x42;">x &amp; y<![CDATA[<z>]]></a>')).toMatchObject({ attributes: { t: '<AB' }, text: 'x & y<z>' });
    expect(() => readXml('<a><b></a>')).toThrow(/unbalanced/);
    expect(() => readXml(`<a>${'<b>'.repeat(20)}${'</b>'.repeat(20)}</a>`)).toThrow(/deeper/);
    expect(() => readXml(`<a>${'<b/>'.repeat(3000)}</a>`)).toThrow(/elements/);
    expect(() => readXml(`<a>${'x'.repeat(70_000)}</a>`)).toThrow(/over/);
  });
});

describe('splitMultipart', () => {
  it('splits a multipart/mixed body at its boundary, types lower case', () => {
    const body = Buffer.from(['--foo', 'Content-Type: application/SDP', '', 'v=0', '--foo', 'Content-Type: application/rs-metadata+xml', 'Content-Disposition: recording-session', '', '<recording/>', '--foo--', ''].join('\r\n'));
    const parts = splitMultipart('multipart/mixed;boundary=foo', body);
    expect(parts.map((p) => [p.type, p.body.toString()])).toEqual([
      ['application/sdp', 'v=0'],
      ['application/rs-metadata+xml', '<recording/>'],
    ]);
    expect(() => splitMultipart('multipart/mixed', body)).toThrow(/boundary/);
    expect(() => splitMultipart('multipart/mixed;boundary=bar', body)).toThrow(SiprecError);
  });
});
