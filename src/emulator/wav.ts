// Reads just enough of a RIFF/WAVE header to know how long the audio is and how its
// samples are laid out, so PCM WAV can be decoded incrementally as bytes arrive.
import type { RawFormat } from '../schema/audio.js';

export interface WavInfo {
  readonly sampleRate: number;
  readonly channels: number;
  readonly bitsPerSample: number;
  readonly formatTag: number;
  /** For WAVE_FORMAT_EXTENSIBLE (0xFFFE): the sub-format tag (first two bytes of the GUID). */
  readonly subFormat?: number | undefined;
  /** Byte offset of the first sample. */
  readonly dataOffset: number;
  /** Declared size of the data chunk; undefined when unknown (0 or 0xFFFFFFFF, as streamed WAVs write). */
  readonly dataBytes?: number | undefined;
  readonly bytesPerSecond: number;
}

/** Parse a WAV header from the first bytes of a stream; undefined when not (yet) a WAV. */
export function parseWavHeader(buf: Uint8Array): WavInfo | undefined {
  const b = Buffer.from(buf.buffer, buf.byteOffset, buf.byteLength);
  if (b.length < 12 || b.toString('ascii', 0, 4) !== 'RIFF' || b.toString('ascii', 8, 12) !== 'WAVE') return undefined;
  let off = 12;
  let fmt: Omit<WavInfo, 'dataOffset'> | undefined;
  while (off + 8 <= b.length) {
    const id = b.toString('ascii', off, off + 4);
    const size = b.readUInt32LE(off + 4);
    if (id === 'fmt ' && off + 24 <= b.length) {
      const formatTag = b.readUInt16LE(off + 8);
      fmt = {
        formatTag,
        channels: b.readUInt16LE(off + 10),
        sampleRate: b.readUInt32LE(off + 12),
        bytesPerSecond: b.readUInt32LE(off + 16),
        bitsPerSample: b.readUInt16LE(off + 22),
        ...(formatTag === 0xfffe && size >= 40 && off + 34 <= b.length ? { subFormat: b.readUInt16LE(off + 32) } : {}),
      };
    } else if (id === 'data') {
      if (!fmt) return undefined;
      const known = size !== 0 && size !== 0xffffffff;
      return { ...fmt, dataOffset: off + 8, ...(known ? { dataBytes: size } : {}) };
    }
    off += 8 + size + (size % 2);
  }
  return undefined;
}

/**
 * The raw format a WAV's samples are in, when the emulator decodes it itself: integer PCM,
 * IEEE float and G.711. Undefined for compressed WAVs (ADPCM, GSM…), which go to ffmpeg.
 */
export function wavSampleFormat(info: WavInfo): RawFormat | undefined {
  const tag = info.formatTag === 0xfffe ? info.subFormat : info.formatTag;
  const bits = info.bitsPerSample;
  if (tag === 1) {
    if (bits === 8) return 'u8';
    if (bits === 16) return 's16le';
    if (bits === 24) return 's24le';
    if (bits === 32) return 's32le';
  }
  if (tag === 3) {
    if (bits === 32) return 'f32le';
    if (bits === 64) return 'f64le';
  }
  if (tag === 6 && bits === 8) return 'alaw';
  if (tag === 7 && bits === 8) return 'mulaw';
  return undefined;
}
