// The duration of a media file, for progress and ETA on a terminal: raw audio from its size,
// anything else from the `Duration:` line ffmpeg prints when it opens the file. Best effort:
// undefined when it cannot be told.
import { execFile } from 'node:child_process';
import { stat } from 'node:fs/promises';
import { resolveFfmpeg } from '../internal/ffmpegPath.js';
import { bytesPerSecond, isRawFormat, type AudioFormat } from '../schema/audio.js';

export async function mediaDurationMs(file: string, format?: AudioFormat | undefined): Promise<number | undefined> {
  try {
    if (format && isRawFormat(format)) return ((await stat(file)).size / bytesPerSecond(format)) * 1000;
    const ffmpeg = await resolveFfmpeg();
    const stderr = await new Promise<string>((resolve) => {
      execFile(ffmpeg.path, ['-hide_banner', '-nostdin', '-i', file], { timeout: 10_000, windowsHide: true }, (_err, _out, err) => resolve(String(err)));
    });
    const m = /Duration: (\d+):(\d{2}):(\d{2}(?:\.\d+)?)/.exec(stderr);
    return m ? (Number(m[1]) * 3600 + Number(m[2]) * 60 + Number(m[3])) * 1000 : undefined;
  } catch {
    return undefined;
  }
}
