// Recognising a self-describing audio container from its first bytes, as the service does
// when no audio_format is given (§4.3). Shared by the emulator (which refuses what it cannot
// detect) and the session (which warns before the service refuses it).
import type { ContainerFormat } from '../schema/audio.js';

/** Bytes {@link sniffContainer} needs to tell. */
export const SNIFF_BYTES = 12;

/**
 * Recognise a self-describing format from its first bytes, the way the service auto-detects
 * (§4.3). Undefined when the bytes are none of the accepted formats (MP4 included: the
 * streaming endpoint does not take it) or too short to tell (under 12 bytes).
 */
export function sniffContainer(head: Uint8Array): ContainerFormat | undefined {
  if (head.length < 12) return undefined;
  const b = Buffer.from(head.buffer, head.byteOffset, head.byteLength);
  const ascii = (from: number, to: number) => b.toString('latin1', from, to);
  if (ascii(0, 4) === 'RIFF' && ascii(8, 12) === 'WAVE') return 'wav';
  if (ascii(0, 4) === 'FORM' && (ascii(8, 12) === 'AIFF' || ascii(8, 12) === 'AIFC')) return 'aiff';
  if (ascii(0, 4) === 'OggS') return 'ogg';
  if (ascii(0, 4) === 'fLaC') return 'flac';
  if (b[0] === 0x1a && b[1] === 0x45 && b[2] === 0xdf && b[3] === 0xa3) return 'webm';
  if (ascii(0, 4) === 'ADIF') return 'aac';
  if (ascii(0, 3) === 'ID3') return 'mp3';
  if (b[0] === 0xff && (b[1]! & 0xf6) === 0xf0) return 'aac'; // ADTS: sync, layer 00
  if (b[0] === 0xff && (b[1]! & 0xe0) === 0xe0 && (b[1]! & 0x06) !== 0) return 'mp3'; // MPEG audio frame sync
  return undefined;
}
