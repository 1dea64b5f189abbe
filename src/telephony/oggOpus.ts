// A minimal Ogg Opus muxer (RFC 7845): RTP carries bare Opus packets, the service takes Ogg,
// so each packet becomes one page, and lost packets become 1-byte packets the decoder conceals.
import { opusPacketSamples } from './payloadTypes.js';

const CRC_TABLE = (() => {
  const t = new Uint32Array(256);
  for (let i = 0; i < 256; i++) {
    let r = i << 24;
    for (let j = 0; j < 8; j++) r = r & 0x80000000 ? (r << 1) ^ 0x04c11db7 : r << 1;
    t[i] = r >>> 0;
  }
  return t;
})();

/** The Ogg CRC-32 (polynomial 0x04c11db7, not reflected, no final xor). */
export function oggCrc(bytes: Uint8Array): number {
  let crc = 0;
  for (let i = 0; i < bytes.length; i++) crc = ((crc << 8) ^ CRC_TABLE[((crc >>> 24) ^ bytes[i]!) & 0xff]!) >>> 0;
  return crc;
}

function page(packet: Uint8Array, flags: number, granule: bigint, serial: number, sequence: number): Uint8Array {
  const segments = Math.floor(packet.byteLength / 255) + 1;
  const out = new Uint8Array(27 + segments + packet.byteLength);
  const view = new DataView(out.buffer);
  out.set([0x4f, 0x67, 0x67, 0x53], 0); // OggS
  out[4] = 0;
  out[5] = flags;
  view.setBigInt64(6, granule, true);
  view.setUint32(14, serial, true);
  view.setUint32(18, sequence, true);
  out[26] = segments;
  for (let i = 0; i < segments - 1; i++) out[27 + i] = 255;
  out[27 + segments - 1] = packet.byteLength % 255;
  out.set(packet, 27 + segments);
  view.setUint32(22, oggCrc(out), true);
  return out;
}

/**
 * Wraps Opus packets, in play order, into an Ogg Opus stream: the headers before the first
 * packet, then one page per packet with its granule position (48 kHz samples).
 *
 * ## Example
 * ```ts
 * import { OggOpusWriter } from 'svc-stream/telephony';
 *
 * const ogg = new OggOpusWriter();
 * const pages = ogg.packet(new Uint8Array([0xfc, 0xff, 0xfe])); // headers + one 20 ms page
 * console.log(pages.length, ogg.granule); // 3 960n
 * ```
 */
export class OggOpusWriter {
  private sequence = 0;
  private started = false;
  private lastToc = 0xf8;
  /** Samples (48 kHz) written so far. */
  granule = 0n;

  constructor(private readonly serial = 0x5356_4331) {}

  /** Pages for one packet (the two header pages first, on the first call). */
  packet(opus: Uint8Array): Uint8Array[] {
    const out: Uint8Array[] = [];
    if (!this.started) {
      this.started = true;
      const stereo = opus.byteLength > 0 && (opus[0]! & 0x04) !== 0;
      const head = new Uint8Array(19);
      const hv = new DataView(head.buffer);
      head.set(new TextEncoder().encode('OpusHead'), 0);
      head[8] = 1;
      head[9] = stereo ? 2 : 1;
      hv.setUint16(10, 0, true); // pre-skip: unknown for a stream joined mid-call
      hv.setUint32(12, 48000, true);
      hv.setInt16(16, 0, true);
      head[18] = 0;
      out.push(page(head, 0x02, 0n, this.serial, this.sequence++));
      const vendor = new TextEncoder().encode('svc-stream');
      const tags = new Uint8Array(8 + 4 + vendor.length + 4);
      tags.set(new TextEncoder().encode('OpusTags'), 0);
      new DataView(tags.buffer).setUint32(8, vendor.length, true);
      tags.set(vendor, 12);
      out.push(page(tags, 0, 0n, this.serial, this.sequence++));
    }
    if (opus.byteLength > 0) this.lastToc = opus[0]!;
    this.granule += BigInt(opusPacketSamples(opus));
    out.push(page(opus, 0, this.granule, this.serial, this.sequence++));
    return out;
  }

  /**
   * Pages standing for `samples` (48 kHz) of missing audio: 1-byte packets (the last TOC with no
   * frame data) that a decoder treats as lost and conceals, as many as cover the gap.
   */
  gap(samples: number): Uint8Array[] {
    const toc = this.lastToc & 0xfc;
    const each = opusPacketSamples(new Uint8Array([toc]));
    const out: Uint8Array[] = [];
    for (let left = samples; left > 0 && each > 0; left -= each) out.push(...this.packet(new Uint8Array([toc])));
    return out;
  }
}
