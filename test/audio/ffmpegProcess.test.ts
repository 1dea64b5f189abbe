import { describe, expect, it } from 'vitest';
import { parseFfmpegHeader } from '../../src/audio/ffmpegProcess.js';

describe('parseFfmpegHeader', () => {
  it('reads the container and duration of input #0', () => {
    const stderr = [
      "Input #0, mov,mp4,m4a,3gp,3g2,mj2, from 'call.mp4':",
      '  Metadata:',
      '    major_brand     : isom',
      '  Duration: 00:10:00.03, start: 0.000000, bitrate: 128 kb/s',
      '  Stream #0:0[0x1](und): Audio: aac (LC) (mp4a / 0x6134706D), 44100 Hz, stereo, fltp, 127 kb/s',
      'Stream mapping:',
    ].join('\n');
    expect(parseFfmpegHeader(stderr)).toEqual({ demuxer: 'mov,mp4,m4a,3gp,3g2,mj2', durationMs: 600_030 });
  });

  it('gives no duration when ffmpeg says N/A, and nothing without an input header', () => {
    expect(parseFfmpegHeader("Input #0, s16le, from 'pipe:':\n  Duration: N/A, bitrate: 256 kb/s\n")).toEqual({ demuxer: 's16le', durationMs: undefined });
    expect(parseFfmpegHeader('pipe:: Invalid data found when processing input\n')).toBeUndefined();
  });
});
