// 'svc-stream': what a streaming pipeline calls. Audio sources and the operators that shape
// them, the session operators, splitSession and the state operators, the errors, the session's
// stats, the concurrency slot, the shipped samples. Every runtime name here is a promise to
// users (at most 60: api/svc-stream.api.md lists them, and CI fails on a change it does not
// show). Each other area has an entry of its own, so this one loads none of them:
// 'svc-stream/schema' (the zod schemas), 'svc-stream/state' (the pure reducers),
// 'svc-stream/batch', 'svc-stream/platform', 'svc-stream/telephony', 'svc-stream/dashboard',
// 'svc-stream/relay', 'svc-stream/fleet', 'svc-stream/emulator', and 'svc-stream/browser'
// (what a page needs, built from the same barrels as this entry).
/// <reference types="node" preserve="true" />

// Audio sources and the operators that shape them.
export { fileSource, type FileSourceOptions } from './audio/fileSource.js';
export { fromReadable, type FromReadableOptions } from './audio/fromReadable.js';
export { fromAsyncIterable, type FromAsyncIterableOptions } from './audio/fromAsyncIterable.js';
export { transcode, transcodeSource, type TranscodeOptions, type TranscodeTarget } from './audio/transcode.js';
export type { FfmpegHeader, FfmpegSpawnInfo } from './audio/ffmpegProcess.js';
export { resolveFfmpeg, verifyFfmpeg, type ResolvedFfmpeg, type ResolveFfmpegOptions } from './audio/ffmpeg.js';
export { probeAudioFile, type ProbeOptions, type ProbeResult } from './audio/probeAudioFile.js';
export type { FileHandling } from './audio/fileFormats.js';
export { rechunk, type RechunkOptions } from './audio/rechunk.js';
export { pace, type PaceOptions } from './audio/pace.js';
export { withAudioFormat } from './audio/withAudioFormat.js';
export { toG711, fromG711, encodeG711, decodeG711, type G711Law } from './audio/g711.js';
export { AudioSource, audioMetaOf, type AudioChunk, type AudioObservable, type AudioSourceMeta, type FlowSlot } from './audio/meta.js';
export { FlowControl } from './audio/FlowControl.js';
export { bytesToMs, msToBytes, type AudioFormat, type RawAudioFormat, type RawFormat, type ContainerFormat, type SampleRate } from './schema/audio.js';
export { SAMPLE_FILES, samplePath, type SampleFile } from './samples.js';

// Streaming sessions.
export { analyzeConversation, type ConversationOptions } from './session/conversation.js';
export { streamJson, type JsonFrame, type JsonEndpoint, type JsonStreamingOptions } from './session/jsonStreaming.js';
export { recordSession, type RecordSessionOptions, type RecordedEvent } from './session/recordSession.js';
export type { ApiKeyFunction, StreamingOptions, WebSocketFactory } from './session/streamingSession.js';
export type { AudioWarningOptions } from './session/AudioCheck.js';
export type { SessionEvent } from './session/SegmentClock.js';
export { DEFAULT_RECONNECT, type ReconnectOptions, type ReconnectPolicy } from './session/reconnect.js';
export { DEFAULT_HEARTBEAT, type HeartbeatOptions } from './session/heartbeat.js';
export { createSessionStats, type SessionStats, type ToleranceOptions } from './session/stats.js';
export { sessionFigures, type SessionFigures, type SessionFiguresInput, type AudioFigures } from './session/figures.js';
export { labelText, type ResultLabel } from './schema/resultLabel.js';
export { isTerminalStatus, type SessionState, type SessionStatus } from './schema/sessionState.js';
export type { BatchConfig, SessionConfig } from './schema/config.js';

// What a session emits: the server's events (their schemas are in 'svc-stream/schema').
export type {
  ServerEvent,
  ServerEventType,
  EventOf,
  Clip,
  PartialClip,
  ClipUpdate,
  ConversationTypePick,
  ParticipantRolePick,
  BehaviorDetection,
  TopicSentiment,
  ClipEvent,
  PartialClipEvent,
  ClipUpdateEvent,
  ConversationTypeEvent,
  ParticipantRoleEvent,
  BehaviorDetectionEvent,
  TopicsEvent,
  TopicSentimentEvent,
  SummaryEvent,
  DoneEvent,
  ErrorEvent,
  UnknownEvent,
} from './schema/events.js';

// Derived streams: splitSession and the state operators (the reducers are in 'svc-stream/state').
export * from './operators/index.js';
export type { OrderedMap } from './state/OrderedMap.js';
export type { TranscriptEntry } from './state/clips.js';
export type { ConversationSnapshot } from './state/snapshot.js';

// Errors and warnings: one hierarchy with a stable code on each; one warning shape.
export * from './errors/publicErrors.js';
export type { SvcWarning, WarningCode, WarningHandler, EventWarning, AudioWarning, AudioSourceWarning, ReplayGapWarning, LimitWarning, PayloadTypeWarning } from './warnings.js';
export type { ToleranceAction } from './schema/parseServerEvent.js';
export { redactUrl } from './redact.js';

// Concurrency slots (in-process or fleet-wide) and the HTTP limits every area shares.
export { Semaphore } from './concurrency/Semaphore.js';
export { underLimiter, type ConcurrencyLimiter, type LimiterLease, type LimiterSource, type LimiterTarget } from './concurrency/limiter.js';
export { HTTP_DEFAULTS, type HttpLimits } from './httpLimits.js';
