// The raw format inside a WAV stream, read from its first bytes: what a resumed session is
// told (as query parameters) when it is sent the WAV's sample data from the middle.
import { SAMPLE_RATES, type RawAudioFormat, type RawFormat, type SampleRate } from '../schema/audio.js';

/** A WAV stream's sample data: its raw format and where the `data` chunk's bytes begin. */
export interface WavLayout {
  readonly format: RawAudioFormat;
  readonly dataOffset: number;
}

/**
 * Read a WAV header from the first bytes of a stream: the layout, `'more'` when the header is
 * not complete yet, or undefined when these bytes are no WAV this client can resume (a
 * compressed WAV, an unlisted sample rate, not RIFF/WAVE).
 */
export function parseWavHeader(bytes: Uint8Array): WavLayout | 'more' | undefined {
  if (bytes.length < 12) return 'more';
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const tag = (at: number): string => String.fromCharCode(bytes[at]!, bytes[at + 1]!, bytes[at + 2]!, bytes[at + 3]!);
  if (tag(0) !== 'RIFF' || tag(8) !== 'WAVE') return undefined;
  let at = 12;
  let fmt: { code: number; channels: number; rate: number; bits: number } | undefined;
  while (at + 8 <= bytes.length) {
    const id = tag(at);
    const size = view.getUint32(at + 4, true);
    const body = at + 8;
    if (id === 'data') {
      if (!fmt) return undefined;
      const format = rawFormatOf(fmt.code, fmt.bits);
      if (!format || !(SAMPLE_RATES as readonly number[]).includes(fmt.rate) || fmt.channels < 1) return undefined;
      return { format: { audio_format: format, sample_rate: fmt.rate as SampleRate, num_channels: fmt.channels }, dataOffset: body };
    }
    if (id === 'fmt ') {
      if (body + 16 > bytes.length) return 'more';
      let code = view.getUint16(body, true);
      // WAVE_FORMAT_EXTENSIBLE: the real code is the first two bytes of the sub-format GUID.
      if (code === 0xfffe && size >= 40) {
        if (body + 26 > bytes.length) return 'more';
        code = view.getUint16(body + 24, true);
      }
      fmt = { code, channels: view.getUint16(body + 2, true), rate: view.getUint32(body + 4, true), bits: view.getUint16(body + 14, true) };
    }
    at = body + size + (size % 2);
  }
  return bytes.length > 1 << 16 ? undefined : 'more';
}

function rawFormatOf(code: number, bits: number): RawFormat | undefined {
  if (code === 1) return bits === 8 ? 'u8' : bits === 16 ? 's16le' : bits === 24 ? 's24le' : bits === 32 ? 's32le' : undefined;
  if (code === 3) return bits === 32 ? 'f32le' : bits === 64 ? 'f64le' : undefined;
  if (code === 6 && bits === 8) return 'alaw';
  if (code === 7 && bits === 8) return 'mulaw';
  return undefined;
}
