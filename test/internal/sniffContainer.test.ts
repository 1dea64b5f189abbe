// sniffContainer: the self-describing containers the service auto-detects, from 12 bytes.
import { describe, expect, it } from 'vitest';
import { SNIFF_BYTES, sniffContainer } from '../../src/internal/sniffContainer.js';

const head = (...parts: Array<string | number[]>): Uint8Array => {
  const bytes = Buffer.concat(parts.map((p) => (typeof p === 'string' ? Buffer.from(p, 'latin1') : Buffer.from(p))));
  return Buffer.concat([bytes, Buffer.alloc(Math.max(0, SNIFF_BYTES - bytes.length))]);
};

describe('sniffContainer', () => {
  it('recognises every container the streaming endpoint detects', () => {
    expect(sniffContainer(head('RIFF\0\0\0\0WAVE'))).toBe('wav');
    expect(sniffContainer(head('FORM\0\0\0\0AIFF'))).toBe('aiff');
    expect(sniffContainer(head('FORM\0\0\0\0AIFC'))).toBe('aiff');
    expect(sniffContainer(head('OggS'))).toBe('ogg');
    expect(sniffContainer(head('fLaC'))).toBe('flac');
    expect(sniffContainer(head([0x1a, 0x45, 0xdf, 0xa3]))).toBe('webm');
    expect(sniffContainer(head('ADIF'))).toBe('aac');
    expect(sniffContainer(head([0xff, 0xf1]))).toBe('aac'); // ADTS
    expect(sniffContainer(head('ID3'))).toBe('mp3');
    expect(sniffContainer(head([0xff, 0xfb]))).toBe('mp3'); // MPEG-1 layer III frame
  });

  it('says nothing of raw PCM, MP4 or fewer than 12 bytes', () => {
    expect(sniffContainer(new Uint8Array(SNIFF_BYTES))).toBeUndefined();
    expect(sniffContainer(head('\0\0\0\x18ftypisom'))).toBeUndefined();
    expect(sniffContainer(Buffer.from('RIFF\0\0\0\0WAV', 'latin1'))).toBeUndefined();
  });

  it('reads a view at an offset as its own bytes', () => {
    const bytes = Buffer.concat([Buffer.from('xxxx'), head('OggS')]);
    expect(sniffContainer(bytes.subarray(4))).toBe('ogg');
  });
});
