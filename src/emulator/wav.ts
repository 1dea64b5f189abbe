// Reads just enough of a RIFF/WAVE header to know how long the audio is.

export interface WavInfo {
  readonly sampleRate: number;
  readonly channels: number;
  readonly bitsPerSample: number;
  readonly formatTag: number;
  /** Byte offset of the first sample. */
  readonly dataOffset: number;
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
      fmt = {
        formatTag: b.readUInt16LE(off + 8),
        channels: b.readUInt16LE(off + 10),
        sampleRate: b.readUInt32LE(off + 12),
        bytesPerSecond: b.readUInt32LE(off + 16),
        bitsPerSample: b.readUInt16LE(off + 22),
      };
    } else if (id === 'data') {
      return fmt ? { ...fmt, dataOffset: off + 8 } : undefined;
    }
    off += 8 + size + (size % 2);
  }
  return undefined;
}
