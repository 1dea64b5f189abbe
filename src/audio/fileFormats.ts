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
