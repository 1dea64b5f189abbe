import { describe, expect, it } from 'vitest';
import { readOffer, SdpError, writeAnswer } from '../../../src/telephony/sip/sdpNegotiation.js';

const offer = (media: string[], session: string[] = ['c=IN IP4 192.0.2.1']) => ['v=0', 'o=- 1 1 IN IP4 192.0.2.1', 's=-', ...session, 't=0 0', ...media, ''].join('\r\n');

describe('readOffer / writeAnswer (RFC 3264)', () => {
  it('picks our first preference the stream offers, notes telephone-event, refuses video with port 0', () => {
    const o = readOffer(offer(['m=audio 4000 RTP/AVP 9 8 0 101', 'a=rtpmap:101 telephone-event/8000', 'm=video 4002 RTP/AVP 31']));
    expect(o.audio).toHaveLength(1);
    expect(o.audio[0]).toMatchObject({ index: 0, port: 4000, address: '192.0.2.1', direction: 'sendrecv', codec: { name: 'PCMU', payloadType: 0 }, dtmf: { payloadType: 101, rate: 8000 } });
    const answer = writeAnswer(o, [{ stream: o.audio[0]!, port: 20000 }], { address: '198.51.100.7', sessionId: '42', version: 1 });
    expect(answer.split('\r\n')).toEqual([
      'v=0',
      'o=svc-stream 42 1 IN IP4 198.51.100.7',
      's=svc-stream',
      'c=IN IP4 198.51.100.7',
      't=0 0',
      'm=audio 20000 RTP/AVP 0 101',
      'a=rtpmap:0 PCMU/8000',
      'a=rtpmap:101 telephone-event/8000',
      'a=fmtp:101 0-16',
      'a=recvonly',
      'm=video 0 RTP/AVP 31',
      '',
    ]);
  });

  it('reads dynamic L16 by its rtpmap, a hold (c=0.0.0.0 or inactive), SIPREC labels; mono only', () => {
    expect(readOffer(offer(['m=audio 4000 RTP/AVP 96', 'a=rtpmap:96 L16/16000'])).audio[0]!.codec).toMatchObject({ name: 'L16', clockRate: 16000 });
    expect(readOffer(offer(['m=audio 4000 RTP/AVP 96', 'a=rtpmap:96 L16/16000/2'])).audio[0]!.codec).toBeUndefined();
    expect(readOffer(offer(['m=audio 4000 RTP/AVP 0'], ['c=IN IP4 0.0.0.0'])).audio[0]!.direction).toBe('inactive');
    const rec = readOffer(offer(['m=audio 4000 RTP/AVP 0', 'a=label:1', 'a=sendonly', 'm=audio 4002 RTP/AVP 0', 'a=label:2', 'a=sendonly']));
    expect(rec.audio.map((a) => [a.label, a.direction])).toEqual([
      ['1', 'sendonly'],
      ['2', 'sendonly'],
    ]);
    expect(readOffer(offer(['m=audio 4000 RTP/AVP 0 8']), ['PCMA']).audio[0]!.codec?.name).toBe('PCMA');
  });

  it('refuses what is not an SDP offer', () => {
    expect(() => readOffer('hello')).toThrow(SdpError);
  });
});
