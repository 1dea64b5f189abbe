// The extensions of §2.1 and what fileSource does with each; the hint for headerless raw files.
import { describe, expect, it } from 'vitest';
import { demuxerMatches, FILE_EXTENSIONS, FILE_FORMATS, RAW_FILE_EXTENSIONS, rawFormatHint } from '../../src/audio/fileFormats.js';
import { CONTAINER_FORMATS } from '../../src/schema/audio.js';

describe('FILE_FORMATS', () => {
  it('passes through what the streaming endpoint detects and transcodes the rest', () => {
    const passthrough = Object.values(FILE_FORMATS).flatMap((h) => (h.mode === 'passthrough' ? [h.format] : []));
    expect([...passthrough].sort()).toEqual([...CONTAINER_FORMATS].sort());
    expect(['.mp4', '.mov', '.opus'].map((e) => FILE_FORMATS[e]?.mode)).toEqual(['transcode', 'transcode', 'transcode']);
    expect(FILE_EXTENSIONS).toEqual(Object.keys(FILE_FORMATS));
  });

  it('no raw extension is a container extension', () => {
    for (const e of Object.keys(RAW_FILE_EXTENSIONS)) expect(FILE_FORMATS[e]).toBeUndefined();
  });
});

describe('rawFormatHint', () => {
  it('names the flags and the option a raw file needs', () => {
    expect(rawFormatHint('.ulaw')).toBe(
      "it is headerless raw audio (usually mulaw, 8000 Hz, mono): give its format, e.g. --format mulaw --rate 8000 --channels 1 (fileSource(path, { format: { audio_format: 'mulaw', sample_rate: 8000, num_channels: 1 } }))",
    );
    expect(rawFormatHint('.raw')).toContain('--format s16le --rate HZ --channels N');
    expect(rawFormatHint('.wav')).toBe('');
  });
});

describe('demuxerMatches', () => {
  it("accepts ffmpeg's demuxer names for each container, and nothing else", () => {
    expect(demuxerMatches('webm', 'matroska,webm')).toBe(true);
    expect(demuxerMatches('wav', 'wav')).toBe(true);
    expect(demuxerMatches('wav', 'mp3')).toBe(false);
    expect(demuxerMatches('mp3', 'mov,mp4,m4a,3gp,3g2,mj2')).toBe(false);
  });
});
