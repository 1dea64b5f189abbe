// One decoder for a ws message's payload, whatever shape ws hands it in.
import { describe, expect, it } from 'vitest';
import { rawDataBuffer, rawDataText } from '../../src/internal/wsData.js';

describe('rawDataBuffer and rawDataText', () => {
  it('a Buffer as is, fragments joined, an ArrayBuffer wrapped; text as UTF-8', () => {
    const b = Buffer.from('héllo', 'utf8');
    expect(rawDataBuffer(b)).toBe(b);
    expect(rawDataBuffer([b.subarray(0, 2), b.subarray(2)]).equals(b)).toBe(true);
    const ab = b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength);
    expect(rawDataBuffer(ab).equals(b)).toBe(true);
    expect(rawDataText([b.subarray(0, 2), b.subarray(2)])).toBe('héllo'); // a character split across fragments
  });
});
