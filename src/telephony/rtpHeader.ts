// The fixed RTP header of one datagram, read in place: what the jitter buffer needs and where
// the payload lies, without building a packet object per datagram.

/** The fixed RTP header fields and where the payload lies (RFC 3550 §5.1, §5.3.1). */
export interface RtpHeader {
  readonly payloadType: number;
  readonly sequenceNumber: number;
  readonly timestamp: number;
  readonly ssrc: number;
  readonly payloadStart: number;
  readonly payloadEnd: number;
}

/**
 * Read the header of a datagram `isRtp` accepted: CSRCs and a header extension skipped,
 * padding taken off the end. Undefined when the lengths do not fit the datagram. Read by hand
 * because it runs for every packet of every call; a full packet object costs more than the
 * five fields the jitter buffer needs.
 */
export function parseRtpHeader(msg: Buffer): RtpHeader | undefined {
  const len = msg.length;
  if (len < 12) return undefined;
  const b0 = msg[0]!;
  let start = 12 + 4 * (b0 & 0x0f);
  if (b0 & 0x10) {
    if (start + 4 > len) return undefined;
    start += 4 + 4 * msg.readUInt16BE(start + 2);
  }
  let end = len;
  if (b0 & 0x20) {
    const padding = msg[len - 1]!;
    if (padding === 0) return undefined;
    end -= padding;
  }
  if (start > end) return undefined;
  return { payloadType: msg[1]! & 0x7f, sequenceNumber: msg.readUInt16BE(2), timestamp: msg.readUInt32BE(4), ssrc: msg.readUInt32BE(8), payloadStart: start, payloadEnd: end };
}
