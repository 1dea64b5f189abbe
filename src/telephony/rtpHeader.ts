// The fixed RTP header of one datagram, read in place: what the jitter buffer needs and where
// the payload lies, without building a packet object, a DataView or a copy per datagram.

/** The fixed RTP header fields and where the payload lies (RFC 3550 §5.1, §5.3.1). */
export interface RtpHeader {
  payloadType: number;
  sequenceNumber: number;
  timestamp: number;
  ssrc: number;
  payloadStart: number;
  payloadEnd: number;
}

/** A header to read into, reused datagram after datagram. */
export function createRtpHeader(): RtpHeader {
  return { payloadType: 0, sequenceNumber: 0, timestamp: 0, ssrc: 0, payloadStart: 0, payloadEnd: 0 };
}

/**
 * Whether a datagram is RTCP: version 2, and a second byte of 192–223 (the RTCP packet types,
 * which on a shared port RTP never uses: RFC 5761 §4, RFC 7983). Checked before RTP, since a
 * marker bit plus payload type 72–76 reads as RTP otherwise. The test rtp.js makes.
 */
export function isRtcpDatagram(msg: Uint8Array): boolean {
  if (msg.length < 4) return false;
  const b0 = msg[0]!;
  const b1 = msg[1]!;
  return b0 > 127 && b0 < 192 && b1 >= 192 && b1 <= 223;
}

/** Whether a datagram can be RTP: version 2 and the fixed header's 12 bytes (the test rtp.js makes). */
export function isRtpDatagram(msg: Uint8Array): boolean {
  const b0 = msg[0]!;
  return msg.length >= 12 && b0 > 127 && b0 < 192;
}

/**
 * Read the header of a datagram {@link isRtpDatagram} accepted into `into` (and return it):
 * CSRCs and a header extension skipped, padding taken off the end. Undefined when the lengths
 * do not fit the datagram. Read by hand because it runs for every packet of every call; the
 * header it fills is the caller's to reuse, valid until the next call.
 */
export function parseRtpHeader(msg: Buffer, into: RtpHeader = createRtpHeader()): RtpHeader | undefined {
  const len = msg.length;
  if (len < 12) return undefined;
  const b0 = msg[0]!;
  let start = 12 + 4 * (b0 & 0x0f);
  if (b0 & 0x10) {
    if (start + 4 > len) return undefined;
    start += 4 + 4 * ((msg[start + 2]! << 8) | msg[start + 3]!);
  }
  let end = len;
  if (b0 & 0x20) {
    const padding = msg[len - 1]!;
    if (padding === 0) return undefined;
    end -= padding;
  }
  if (start > end) return undefined;
  into.payloadType = msg[1]! & 0x7f;
  into.sequenceNumber = (msg[2]! << 8) | msg[3]!;
  into.timestamp = ((msg[4]! << 24) | (msg[5]! << 16) | (msg[6]! << 8) | msg[7]!) >>> 0;
  into.ssrc = ((msg[8]! << 24) | (msg[9]! << 16) | (msg[10]! << 8) | msg[11]!) >>> 0;
  into.payloadStart = start;
  into.payloadEnd = end;
  return into;
}
