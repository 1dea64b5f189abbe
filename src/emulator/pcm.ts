// Decodes every raw format of §4.3 to float samples in [-1, 1], incrementally: bytes may
// arrive split anywhere, a partial sample frame waits for the next chunk.
import { RAW_FORMAT_DESCRIPTORS, type RawFormat } from '../schema/audio.js';

/** Interleaved float PCM. */
export interface PcmBlock {
  readonly sampleRate: number;
  readonly channels: number;
  /** Interleaved samples in [-1, 1]; length is a multiple of `channels`. */
  readonly data: Float32Array;
}

/** G.711 µ-law byte to a linear sample in [-1, 1]. */
export function mulawToFloat(byte: number): number {
  const u = ~byte & 0xff;
  const exponent = (u >> 4) & 0x07;
  const mantissa = u & 0x0f;
  const magnitude = (((mantissa << 3) + 0x84) << exponent) - 0x84;
  return ((u & 0x80) !== 0 ? -magnitude : magnitude) / 32768;
}

/** G.711 A-law byte to a linear sample in [-1, 1]. */
export function alawToFloat(byte: number): number {
  const a = byte ^ 0x55;
  const exponent = (a >> 4) & 0x07;
  const mantissa = a & 0x0f;
  const magnitude = exponent === 0 ? (mantissa << 4) + 8 : ((mantissa << 4) + 0x108) << (exponent - 1);
  return ((a & 0x80) !== 0 ? magnitude : -magnitude) / 32768;
}

type Reader = (b: Buffer, off: number) => number;

function readerFor(format: RawFormat): Reader {
  const d = RAW_FORMAT_DESCRIPTORS[format];
  const le = d.endianness !== 'be';
  const n = d.bytesPerSample;
  switch (d.encoding) {
    case 'mulaw':
      return (b, o) => mulawToFloat(b[o]!);
    case 'alaw':
      return (b, o) => alawToFloat(b[o]!);
    case 'float':
      if (n === 4) return le ? (b, o) => b.readFloatLE(o) : (b, o) => b.readFloatBE(o);
      return le ? (b, o) => b.readDoubleLE(o) : (b, o) => b.readDoubleBE(o);
    case 'signed': {
      const scale = 2 ** (8 * n - 1);
      if (n === 1) return (b, o) => b.readInt8(o) / scale;
      return le ? (b, o) => b.readIntLE(o, n) / scale : (b, o) => b.readIntBE(o, n) / scale;
    }
    case 'unsigned': {
      const half = 2 ** (8 * n - 1);
      if (n === 1) return (b, o) => (b[o]! - half) / half;
      return le ? (b, o) => (b.readUIntLE(o, n) - half) / half : (b, o) => (b.readUIntBE(o, n) - half) / half;
    }
  }
}

/** Incremental decoder of one raw format. */
export class RawPcmDecoder {
  private readonly read: Reader;
  private readonly bytesPerSample: number;
  private readonly frameBytes: number;
  private rest: Buffer = Buffer.alloc(0);
  /** Whole sample frames decoded so far. */
  frames = 0;

  constructor(
    readonly format: RawFormat,
    readonly sampleRate: number,
    readonly channels: number,
  ) {
    this.read = readerFor(format);
    this.bytesPerSample = RAW_FORMAT_DESCRIPTORS[format].bytesPerSample;
    this.frameBytes = this.bytesPerSample * channels;
  }

  /** Bytes held back because they do not yet make a whole sample frame. */
  get pendingBytes(): number {
    return this.rest.length;
  }

  push(chunk: Uint8Array): PcmBlock {
    const bytes = this.rest.length === 0 ? Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength) : Buffer.concat([this.rest, chunk]);
    const whole = Math.floor(bytes.length / this.frameBytes);
    const data = new Float32Array(whole * this.channels);
    for (let i = 0, o = 0; i < data.length; i++, o += this.bytesPerSample) data[i] = this.read(bytes, o);
    this.rest = Buffer.from(bytes.subarray(whole * this.frameBytes));
    this.frames += whole;
    return { sampleRate: this.sampleRate, channels: this.channels, data };
  }
}

/** s16le bytes (ffmpeg's output) to float, with the same carry of a split sample. */
export function s16leDecoder(sampleRate: number, channels: number): RawPcmDecoder {
  return new RawPcmDecoder('s16le', sampleRate, channels);
}
