// Telephony ingest: RTP call legs and cloud media streams, their jitter buffers, and one
// conversation-analysis session per call.
export { SequenceExtender, timestampDelta } from './rtpSequence.js';
export { JitterBuffer, MAX_DROPOUT, createJitterStats, type JitterBufferOptions, type JitterPacket, type JitterStats, type Playout } from './jitterBuffer.js';
export {
  STATIC_PAYLOAD_TYPES,
  nearestServiceRate,
  opusPacketSamples,
  parsePayloadTypeArg,
  resolvePayloadType,
  routeFormat,
  type CodecRoute,
  type PayloadTypeSpec,
  type RtpCodec,
  type RtpCodecName,
} from './payloadTypes.js';
export { OggOpusWriter, oggCrc } from './oggOpus.js';
export { LiveAudio } from './liveAudio.js';
export { PlayoutStream, createStreamStats, type PlayoutStreamOptions, type StreamStats } from './playoutStream.js';
export { rtpSource, createRtpSourceStats, type CallLeg, type RtpSourceOptions, type RtpSourceStats } from './rtpSource.js';
export {
  MEDIA_STREAM_PRESETS,
  TELNYX_PRESET,
  TWILIO_PRESET,
  detectPreset,
  encodingLaw,
  normalizeTrack,
  readField,
  readNumber,
  type MediaStreamPreset,
  type MediaStreamPresetName,
} from './mediaStreamPresets.js';
export { TrackInterleaver } from './trackInterleaver.js';
export {
  mediaStreamServer,
  createMediaStreamServerStats,
  type MediaStreamCall,
  type MediaStreamServerOptions,
  type MediaStreamServerStats,
  type MediaTrack,
} from './mediaStreamServer.js';
export {
  analyzeCalls,
  createAnalyzeCallsStats,
  type AnalyzableCall,
  type AnalyzeCallsOptions,
  type AnalyzeCallsStats,
  type CallAnalysis,
  type CallOutcome,
  type CallStatus,
} from './analyzeCalls.js';
