// The file extensions of §2.1 and what fileSource does with each: pass the bytes through with
// a container format the streaming endpoint detects, or transcode them to raw PCM.
import type { ContainerFormat } from '../schema/audio.js';

/** How a file of one extension reaches the streaming endpoint. */
export type FileHandling =
  | { readonly mode: 'passthrough'; readonly format: ContainerFormat }
  | { readonly mode: 'transcode' };

/**
 * Every extension of §2.1. The streaming endpoint detects wav, mp3, ogg, flac, webm, aac and
 * aiff from their headers; it refuses mp4 and mov, and `opus` is not an `audio_format` it
 * takes, so those are transcoded.
 */
export const FILE_FORMATS: Readonly<Record<string, FileHandling>> = {
  '.aac': { mode: 'passthrough', format: 'aac' },
  '.aiff': { mode: 'passthrough', format: 'aiff' },
  '.flac': { mode: 'passthrough', format: 'flac' },
  '.mp3': { mode: 'passthrough', format: 'mp3' },
  '.mp4': { mode: 'transcode' },
  '.mov': { mode: 'transcode' },
  '.ogg': { mode: 'passthrough', format: 'ogg' },
  '.opus': { mode: 'transcode' },
  '.wav': { mode: 'passthrough', format: 'wav' },
  '.webm': { mode: 'passthrough', format: 'webm' },
};

/**
 * Extensions of headerless raw audio: their bytes say nothing of their format, so a file of
 * one needs its format given (`fileSource(path, { format })`, `--format/--rate/--channels`).
 * The value is the format such a file usually holds, for the hint in the error.
 */
export const RAW_FILE_EXTENSIONS: Readonly<Record<string, string>> = {
  '.raw': 's16le at the rate it was recorded',
  '.pcm': 's16le at the rate it was recorded',
  '.sln': 's16le, 8000 Hz, mono',
  '.ulaw': 'mulaw, 8000 Hz, mono',
  '.mulaw': 'mulaw, 8000 Hz, mono',
  '.ul': 'mulaw, 8000 Hz, mono',
  '.alaw': 'alaw, 8000 Hz, mono',
  '.al': 'alaw, 8000 Hz, mono',
};

/** The flags a raw extension usually needs, for messages (`--format mulaw --rate 8000 --channels 1`). */
export function rawFormatHint(extension: string): string {
  const usual = RAW_FILE_EXTENSIONS[extension];
  if (usual === undefined) return '';
  const m = /^(\w+), (\d+) Hz, mono$/.exec(usual);
  const flags = m ? `--format ${m[1]} --rate ${m[2]} --channels 1` : '--format s16le --rate HZ --channels N';
  const option = m ? `{ audio_format: '${m[1]}', sample_rate: ${m[2]}, num_channels: 1 }` : `{ audio_format: 's16le', sample_rate: HZ, num_channels: N }`;
  return `it is headerless raw audio (usually ${usual}): give its format, e.g. ${flags} (fileSource(path, { format: ${option} }))`;
}

/** The extensions of §2.1, for messages. */
export const FILE_EXTENSIONS: readonly string[] = Object.keys(FILE_FORMATS);

/** ffmpeg's demuxer names (the `Input #0, <names>, from` line) for each passthrough format. */
const DEMUXERS: Readonly<Record<ContainerFormat, readonly string[]>> = {
  aac: ['aac'],
  aiff: ['aiff'],
  flac: ['flac'],
  mp3: ['mp3'],
  ogg: ['ogg'],
  wav: ['wav'],
  webm: ['matroska,webm', 'webm'],
};

/** Whether ffmpeg's demuxer for a file is the container its extension promises. */
export function demuxerMatches(format: ContainerFormat, demuxer: string): boolean {
  return DEMUXERS[format].includes(demuxer);
}
