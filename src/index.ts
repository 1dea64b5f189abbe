// The public API of svc-stream's main entry, listed by name: every export here is a promise,
// and test/package/exports.snapshot.json makes each change to the list a visible diff.
// This entry is the streaming core (audio sources, sessions, derived state, errors); each
// other area has an entry of its own, so `import { analyzeConversation } from 'svc-stream'`
// loads none of them: 'svc-stream/batch', 'svc-stream/platform', 'svc-stream/telephony',
// 'svc-stream/dashboard', 'svc-stream/fleet', 'svc-stream/operators', 'svc-stream/emulator',
// and 'svc-stream/browser' (the page-safe subset: events, reducers, splitSession).
/// <reference types="node" preserve="true" />

// Contract: schemas of every resource, and the types derived from them.
export {
  RAW_FORMATS,
  RawFormatSchema,
  CONTAINER_FORMATS,
  ContainerFormatSchema,
  SAMPLE_RATES,
  SampleRateSchema,
  MIN_CHANNELS,
  MAX_CHANNELS,
  NumChannelsSchema,
  RAW_FORMAT_DESCRIPTORS,
  AudioParamsSchema,
  isRawFormat,
  bytesPerFrame,
  bytesPerSecond,
  bytesToMs,
  type RawFormat,
  type ContainerFormat,
  type SampleRate,
  type RawFormatDescriptor,
  type AudioParams,
  type RawAudioFormat,
  type AudioFormat,
} from './schema/audio.js';
export {
  ErrorResponseSchema,
  ValidationErrorSchema,
  HTTPValidationErrorSchema,
  type ErrorResponse,
  type ValidationError,
  type HTTPValidationError,
} from './schema/batch.js';
export {
  ConversationTypeDefSchema,
  ParticipantRoleDefSchema,
  BehaviorDefSchema,
  PresetRefSchema,
  BehaviorSchema,
  MAX_CUSTOM_TERMS,
  MAX_CUSTOM_TERMS_JSON_CHARS,
  CustomTermSchema,
  CustomTermsSchema,
  SttOptionsSchema,
  BatchConfigSchema,
  type ConversationTypeDef,
  type ParticipantRoleDef,
  type BehaviorDef,
  type CustomTerm,
  type SttOptions,
  type BatchConfig,
  type SessionConfig,
} from './schema/config.js';
export {
  ClipSchema,
  PartialClipSchema,
  ClipUpdateSchema,
  SELECTION_SOURCES,
  SelectionSourceSchema,
  ConversationTypePickSchema,
  ParticipantRolePickSchema,
  BehaviorDetectionSchema,
  TopicSentimentSchema,
  ClipEventSchema,
  PartialClipEventSchema,
  ClipUpdateEventSchema,
  ConversationTypeEventSchema,
  ParticipantRoleEventSchema,
  BehaviorDetectionEventSchema,
  TopicsEventSchema,
  TopicSentimentEventSchema,
  SummaryEventSchema,
  DoneEventSchema,
  ErrorEventSchema,
  UnknownEventSchema,
  ServerEventSchema,
  parseServerEvent,
  parseServerEventValue,
  EVENT_TOLERANCE,
  type ToleranceAction,
  type EventWarning,
  type ParseOptions,
  type Clip,
  type PartialClip,
  type ClipUpdate,
  type ConversationTypePick,
  type ParticipantRolePick,
  type BehaviorDetection,
  type TopicSentiment,
  type ServerEvent,
  type ServerEventType,
  type EventOf,
  type ClipEvent,
  type PartialClipEvent,
  type ClipUpdateEvent,
  type ConversationTypeEvent,
  type ParticipantRoleEvent,
  type BehaviorDetectionEvent,
  type TopicsEvent,
  type TopicSentimentEvent,
  type SummaryEvent,
  type DoneEvent,
  type ErrorEvent,
  type UnknownEvent,
  type ParseResult,
} from './schema/events.js';

// Errors: one hierarchy, a stable code on each.
export {
  ERROR_TABLE,
  ERROR_CODES,
  CLOSE_CODES,
  SvcError,
  ApiError,
  SessionError,
  InputError,
  ContractError,
  AudioSourceError,
  isSvcError,
  type ErrorCode,
  type ErrorCodeRule,
  type CloseCodeRule,
  type AudioAccount,
  type SvcErrorOptions,
  type SessionErrorOptions,
} from './errors.js';
export { redactUrl } from './redact.js';

// Audio sources: files, Node streams, async iterables, ffmpeg, framing, pacing, G.711.
export { AudioSource, audioMetaOf, withAudioMeta, type AudioChunk, type AudioObservable, type AudioSourceMeta, type FlowSlot } from './audio/meta.js';
export { withAudioFormat } from './audio/withAudioFormat.js';
export { fileSource, type FileSourceOptions } from './audio/fileSource.js';
export { FILE_EXTENSIONS, FILE_FORMATS, type FileHandling } from './audio/fileFormats.js';
export { probeAudioFile, type ProbeOptions, type ProbeResult } from './audio/probeAudioFile.js';
export { fromReadable, type FromReadableOptions } from './audio/fromReadable.js';
export { fromAsyncIterable, type FromAsyncIterableOptions } from './audio/fromAsyncIterable.js';
export {
  DEFAULT_TRANSCODE_TARGET,
  transcode,
  transcodeSource,
  transcodeTarget,
  type TranscodeOptions,
  type TranscodeTarget,
} from './audio/transcode.js';
export type { FfmpegHeader, FfmpegSpawnInfo } from './audio/ffmpegProcess.js';
export { resolveFfmpeg, verifyFfmpeg, type ResolvedFfmpeg, type ResolveFfmpegOptions } from './audio/ffmpeg.js';
export { SAMPLE_FILES, samplePath, type SampleFile } from './samples.js';
export { frame, frameBytes, type FrameOptions } from './audio/frame.js';
export { pace, type PaceOptions } from './audio/pace.js';
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
} from './audio/g711.js';

// Streaming sessions.
export { FlowControl } from './audio/flow.js';
export { createSessionStats, type SessionStats, type ToleranceOptions } from './session/stats.js';
export type { AudioWarning, AudioWarningOptions } from './session/audioCheck.js';
export { STREAMING_PATHS } from './session/url.js';
export { isTerminalStatus, type SessionState, type SessionStatus } from './schema/sessionState.js';
export type { StreamingOptions, WebSocketFactory } from './session/streamingSession.js';
export { analyzeConversation, conversationSession, configFrame, type ConversationOptions } from './session/conversation.js';
export { recordSession, RECORDING_HEADER, type RecordSessionOptions, type RecordedEvent } from './session/recordSession.js';
export { DEFAULT_RECONNECT, type ReconnectOptions, type ReconnectPolicy } from './session/reconnect.js';
export { DEFAULT_HEARTBEAT, type HeartbeatOptions } from './session/heartbeat.js';
export type { SessionEvent } from './session/segments.js';
export { streamJson, JsonFrameSchema, type JsonFrame, type JsonEndpoint, type JsonStreamingOptions } from './session/jsonStreaming.js';

// Derived state: the ordering rules as pure reducers, and one session split into streams.
export { OrderedMap } from './state/OrderedMap.js';
export { clipsReducer, createClipsState, initialClipsState, type ClipsOptions, type ClipsState, type TranscriptEntry } from './state/clips.js';
export { DEFAULT_MAX_PENDING_UPDATES, type PendingUpdates } from './state/pendingUpdates.js';
export { conversationReducer, initialConversationState, type ConversationState } from './state/conversation.js';
export { behaviorKey, behaviorsReducer, initialBehaviorsState, type BehaviorsState } from './state/behaviors.js';
export { aggregatesReducer, initialAggregatesState, sentimentKey, type AggregatesState } from './state/aggregates.js';
export { initialConversationSnapshot, snapshotReducer, type ConversationSnapshot } from './state/snapshot.js';
export { splitSession, type SessionStreams } from './state/splitSession.js';

// Shared by every area: concurrency limiters (in-process or fleet-wide) and the HTTP limits.
export { Semaphore } from './batch/semaphore.js';
export { underLimiter, type ConcurrencyLimiter, type LimiterLease, type LimiterSource, type LimiterTarget } from './limiter.js';
export { HTTP_DEFAULTS, type HttpLimits } from './httpLimits.js';
