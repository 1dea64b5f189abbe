import * as rtp from 'rtp.js/packets';
import { describe, expect, it } from 'vitest';
import { createRtpHeader, isRtcpDatagram, isRtpDatagram, parseRtpHeader } from '../../src/telephony/rtpHeader.js';

function packet(options: { pt?: number; marker?: boolean; csrcs?: number; extensionWords?: number; padding?: number; payload?: number } = {}): Buffer {
  const csrcs = options.csrcs ?? 0;
  const ext = options.extensionWords;
  const head = 12 + 4 * csrcs + (ext !== undefined ? 4 + 4 * ext : 0);
  const payload = options.payload ?? 160;
  const b = Buffer.alloc(head + payload + (options.padding ?? 0), 0x55);
  b[0] = 0x80 | csrcs | (ext !== undefined ? 0x10 : 0) | (options.padding ? 0x20 : 0);
  b[1] = (options.marker ? 0x80 : 0) | (options.pt ?? 0);
  b.writeUInt16BE(65535, 2);
  b.writeUInt32BE(0xfffffff0, 4);
  b.writeUInt32BE(0xdeadbeef, 8);
  if (ext !== undefined) b.writeUInt16BE(ext, 12 + 4 * csrcs + 2);
  if (options.padding) b[b.length - 1] = options.padding;
  return b;
}

describe('rtpHeader', () => {
  it.each([
    ['plain PCMU', packet(), { payloadType: 0, payloadStart: 12, payloadEnd: 172 }],
    ['two CSRCs', packet({ csrcs: 2 }), { payloadStart: 20, payloadEnd: 180 }],
    ['a header extension of 3 words', packet({ extensionWords: 3 }), { payloadStart: 28, payloadEnd: 188 }],
    ['4 bytes of padding', packet({ padding: 4 }), { payloadStart: 12, payloadEnd: 172 }],
    ['a dynamic type with the marker bit', packet({ pt: 96, marker: true }), { payloadType: 96 }],
  ])('%s: fields read in place, into the one header it is given', (_name, msg, expected) => {
    const into = createRtpHeader();
    expect(parseRtpHeader(msg, into)).toBe(into);
    expect(into).toMatchObject({ sequenceNumber: 65535, timestamp: 0xfffffff0, ssrc: 0xdeadbeef, ...expected });
  });

  it('refuses lengths that do not fit the datagram', () => {
    const badExtension = packet({ extensionWords: 3 }).subarray(0, 20);
    expect(parseRtpHeader(badExtension)).toBeUndefined();
    const zeroPadding = packet({ padding: 4 });
    zeroPadding[zeroPadding.length - 1] = 0;
    expect(parseRtpHeader(zeroPadding)).toBeUndefined();
    expect(parseRtpHeader(Buffer.alloc(11, 0x80))).toBeUndefined();
  });

  it('tells RTP from RTCP as rtp.js does, on every first and second byte', () => {
    const msg = Buffer.alloc(16);
    for (let b0 = 0; b0 < 256; b0++) {
      for (let b1 = 0; b1 < 256; b1++) {
        msg[0] = b0;
        msg[1] = b1;
        const view = new DataView(msg.buffer, msg.byteOffset, msg.byteLength);
        expect(isRtcpDatagram(msg)).toBe(rtp.isRtcp(view));
        expect(isRtpDatagram(msg)).toBe(rtp.isRtp(view));
      }
    }
    expect(isRtpDatagram(Buffer.from([0x80, 0, 0, 0, 0, 0, 0, 0]))).toBe(false);
  });
});
