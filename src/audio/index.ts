// The public API of the audio sources: files, Node streams, async iterables, ffmpeg
// transcoding, framing, real-time pacing and G.711.
export { AUDIO_META, audioMetaOf, withAudioMeta, type AudioChunk, type AudioObservable, type AudioSourceMeta, type FlowSlot } from './meta.js';
export { fileSource, type FileSourceOptions } from './fileSource.js';
export { FILE_EXTENSIONS, FILE_FORMATS, type FileHandling } from './fileFormats.js';
export { probeAudioFile, type ProbeOptions, type ProbeResult } from './probeAudioFile.js';
export { fromReadable, type FromReadableOptions } from './fromReadable.js';
export { fromAsyncIterable, type FromAsyncIterableOptions } from './fromAsyncIterable.js';
export { DEFAULT_TRANSCODE_TARGET, transcode, transcodeSource, transcodeTarget, type TranscodeOptions, type TranscodeTarget } from './transcode.js';
export type { FfmpegSpawnInfo } from './ffmpegProcess.js';
export { clearFfmpegCache, DEFAULT_FFMPEG_PACKAGES, resolveFfmpeg, verifyFfmpeg, type ResolvedFfmpeg, type ResolveFfmpegOptions } from './ffmpegPath.js';
export { frame, frameBytes, type FrameOptions } from './frame.js';
export { pace, type PaceOptions } from './pace.js';
export {
  alawDecode,
  alawEncode,
  decodeG711,
  encodeG711,
  fromG711,
  mulawDecode,
  mulawEncode,
  s16leBytes,
  s16leSamples,
  toG711,
  type G711Law,
} from './g711.js';
