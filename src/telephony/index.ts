// 'svc-stream/telephony': call audio into sessions — RTP call legs with a jitter buffer,
// cloud media streams (Twilio, Telnyx), Genesys AudioHook, and one session per call (analyzeCalls).
/// <reference types="node" preserve="true" />

export {
  JitterBuffer,
  createJitterStats,
  type JitterBufferOptions,
  type JitterPacket,
  type JitterStats,
  type Playout,
} from './JitterBuffer.js';
export {
  STATIC_PAYLOAD_TYPES,
  parsePayloadTypeArg,
  resolvePayloadType,
  type CodecRoute,
  type PayloadTypeSpec,
  type RtpCodec,
  type RtpCodecName,
} from './payloadTypes.js';
export { OggOpusWriter } from './oggOpus.js';
export type { StreamStats } from './PlayoutStream.js';
export { rtpSource, type RtpSourceOptions } from './rtpSource.js';
export { createRtpSourceStats, type CallLeg, type RtpSourceStats } from './RtpLegs.js';
export {
  MEDIA_STREAM_PRESETS,
  TELNYX_PRESET,
  TWILIO_PRESET,
  detectPreset,
  type MediaStreamPreset,
  type MediaStreamPresetName,
} from './mediaStreamPresets.js';
export {
  mediaStreamServer,
  createMediaStreamServerStats,
  type MediaStreamCall,
  type MediaStreamServerOptions,
  type MediaStreamServerStats,
  type MediaTrack,
} from './mediaStreamServer.js';
export { twilioSignature, verifyTwilioSignature, type MediaStreamAuth, type MediaStreamRefusal } from './mediaStreamAuth.js';
export {
  audioHookServer,
  createAudioHookServerStats,
  type AudioHookCall,
  type AudioHookCallStats,
  type AudioHookServerOptions,
  type AudioHookServerStats,
} from './audioHookServer.js';
export { AUDIOHOOK_SIGNED_COMPONENTS, audioHookSignatureHeaders, type AudioHookAuth, type AudioHookAuthFailure, type AudioHookRefusal, type AudioHookSignatureRequest } from './audioHookAuth.js';
export type { AudioHookEnd, AudioHookFormat, AudioHookGap, AudioHookNotice } from './audioHookState.js';
export type { AudioHookChannel, AudioHookMedia, AudioHookOpenParameters, AudioHookParticipant } from '../schema/audioHook.js';
export type { LimitWarning, PayloadTypeWarning, WarningHandler } from '../warnings.js';
export {
  sipServer,
  createSipServerStats,
  type SipServerOptions,
  type SipServerStats,
  type SipTimers,
  type SipLifecycle,
  type SipServerControl,
  type SipMetric,
  type SipRecOptions,
} from './sip/sipServer.js';
export type { SipCall, SipCallEnd, SipCallMetadata, SipCallParticipant, SipCallStats, SipParty } from './sip/sipCall.js';
export type { SipRefusal } from './sip/SipUserAgent.js';
export type { SipRefusalReason } from './sip/sipMessage.js';
export type { SipDigestAuth, DigestAlgorithm, DigestRefusal } from './sip/digestAuth.js';
export type { SipCodecName } from './sip/sipCodecs.js';
export type { PortRange } from './sip/rtpPorts.js';
export type { SipStreamCounters } from './sip/sipMedia.js';
export {
  callWorkers,
  createCallWorkersStats,
  isCallWorker,
  type CallWorker,
  type CallWorkersEvent,
  type CallWorkersOptions,
  type CallWorkersStats,
} from './callWorkers.js';
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
export {
  ServiceLifecycle,
  DEFAULT_DRAIN_TIMEOUT_MS,
  type CallServer,
  type CallServerHandle,
  type Readiness,
  type ServiceLifecycleOptions,
} from '../service/lifecycle.js';
export { serviceReducer, INITIAL_SERVICE_STATE, type ServiceEvent, type ServiceState, type ServiceStatus } from '../service/serviceState.js';
export type { MetricFamilyJson, MetricSample, MetricsJson, ServiceMetric } from '../service/metric.js';
export { ClusterMetrics } from './clusterMetrics.js';
export type { OpsAnswer, OpsPath } from '../service/opsHttp.js';
export { DIAGNOSTICS_CHANNELS } from '../service/channels.js';
