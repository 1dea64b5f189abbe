// The public API of svc-stream, listed by name: every export here is a promise, and
// test/package/exports.snapshot.json makes each change to the list a visible diff.
// Operators over events also live in 'svc-stream/operators'; the local emulator in
// 'svc-stream/emulator'.
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
  AUDIO_EVENT_NAMES,
  AudioEventNameSchema,
  AudioEventResultSchema,
  EMOTION_LABELS,
  EmotionLabelSchema,
  EmotionWindowSchema,
  EmotionResultSchema,
  ErrorResponseSchema,
  ValidationErrorSchema,
  HTTPValidationErrorSchema,
  PresetSchema,
  PresetListSchema,
  type AudioEventName,
  type AudioEventResult,
  type EmotionLabel,
  type EmotionWindow,
  type EmotionResult,
  type ErrorResponse,
  type ValidationError,
  type HTTPValidationError,
  type Preset,
  type PresetList,
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
  type AudioAccount,
  type SvcErrorOptions,
} from './errors.js';
export { redactUrl } from './internal/redact.js';

// Audio sources: files, Node streams, async iterables, ffmpeg, framing, pacing, G.711.
export { audioMetaOf, withAudioMeta, type AudioChunk, type AudioObservable, type AudioSourceMeta, type FlowSlot } from './audio/meta.js';
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
export { resolveFfmpeg, verifyFfmpeg, type ResolvedFfmpeg, type ResolveFfmpegOptions } from './internal/ffmpegPath.js';
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
export { FlowControl } from './internal/flow.js';
export { createSessionStats, type SessionPhase, type SessionStats, type ToleranceOptions } from './session/stats.js';
export { STREAMING_PATHS } from './session/url.js';
export type { SessionState, SessionStatus, StreamingOptions, WebSocketFactory } from './session/streamingSession.js';
export { analyzeConversation, conversationSession, configFrame, type ConversationOptions } from './session/conversation.js';
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

// Batch calls.
export { BATCH_ENDPOINTS, type BatchEndpointName, type BatchModel } from './batch/endpoints.js';
export { BATCH_FILE_EXTENSIONS, MAX_UPLOAD_BYTES, checkUploadFile, type CheckedFile } from './batch/files.js';
export {
  Semaphore,
  batchLimiter,
  DEFAULT_BATCH_CONCURRENCY,
  MAX_BATCH_CONCURRENCY,
} from './batch/semaphore.js';
export { underLimiter, type ConcurrencyLimiter, type LimiterLease, type LimiterSource, type LimiterTarget } from './internal/limiter.js';

// Fleet scale: limits shared through Redis (ioredis and redis-semaphore load on first use).
export { createRedisLimits, type RedisLimits, type RedisLimiter, type RedisLimitsOptions } from './fleet/redisLimiter.js';
export {
  createBatchQueue,
  runBatchWorker,
  QUEUE_MODELS,
  type QueueModel,
  type BatchJobData,
  type BatchJobOutcome,
  type BatchQueue,
  type BatchQueueCounts,
  type BatchQueueOptions,
  type AddOptions as BatchQueueAddOptions,
  type StoredError,
  type WorkerProgress,
  type BatchWorkerOptions,
  type WorkerSummary,
} from './fleet/batchQueue.js';
export {
  retryDelay,
  retryClassOf,
  retryByCause,
  stopsRun,
  RUN_STOPPING_CODES,
  type RetryPolicy,
  type RetryClass,
} from './batch/retry.js';
export type { BatchOptions } from './batch/request.js';
export { HTTP_DEFAULTS, type HttpLimits } from './internal/http.js';
export {
  detectAudioEvents,
  detectAudioEventsAsync,
  detectEmotion,
  detectEmotionAsync,
  transcribeFile,
  detectSyntheticVoice,
  redactPiiPhi,
  analyzeConversationFile,
  listPresets,
  listPresetsAsync,
  BatchJsonResultSchema,
  type BatchJsonResult,
  type EmotionOptions,
  type TranscribeOptions,
  type SttVariant,
  type ConversationBatchOptions,
  type ListPresetsOptions,
} from './batch/calls.js';
export { overFiles, isFileResult, type FileOutcome, type FilesOptions, type FileCall } from './batch/overFiles.js';

// Orchestration: jobs and polling.
export {
  PlatformClient,
  isTransientPollError,
  type PlatformClientOptions,
  type SubmitOptions,
  type PlatformCallOptions,
  type MultiFileSubmission,
  type PollJobOptions,
} from './platform/PlatformClient.js';
export { poll, pollDelay, DEFAULT_POLL_OPTIONS, type PollOptions, type PollSpec, type PollVerdict } from './platform/poll.js';
export { JobError, JobUploadError } from './platform/errors.js';
export { SINGLE_FILE_MAX_BYTES, SUBMISSION_EXTENSIONS, type AudioFileInput } from './platform/files.js';
export {
  JobFlagsSchema,
  SubmissionReplySchema,
  RealtimeSubmissionReplySchema,
  JobStatusSchema,
  JOB_COMPLETED,
  JOB_FAILED_STATES,
  JOB_PENDING_STATES,
  type JobFlags,
  type SubmissionReply,
  type RealtimeSubmissionReply,
  type JobStatus,
} from './platform/schema.js';

// The live dashboard.
export { startDashboard, type DashboardOptions, type RunningDashboard } from './dashboard/server.js';
export { dashboardSession, type DashboardSession, type DashboardSessionOptions } from './dashboard/dashboardSession.js';
export { dashboardView, isTerminalPhase, type DashboardView, type DashboardStatus, type DashboardError } from './dashboard/view.js';

// Telephony: RTP call legs, cloud media streams, one session per call.
export {
  JitterBuffer,
  createJitterStats,
  type JitterBufferOptions,
  type JitterPacket,
  type JitterStats,
  type Playout,
} from './telephony/jitterBuffer.js';
export {
  STATIC_PAYLOAD_TYPES,
  parsePayloadTypeArg,
  resolvePayloadType,
  type CodecRoute,
  type PayloadTypeSpec,
  type RtpCodec,
  type RtpCodecName,
} from './telephony/payloadTypes.js';
export { OggOpusWriter } from './telephony/oggOpus.js';
export type { StreamStats } from './telephony/playoutStream.js';
export { rtpSource, createRtpSourceStats, type CallLeg, type RtpSourceOptions, type RtpSourceStats } from './telephony/rtpSource.js';
export {
  MEDIA_STREAM_PRESETS,
  TELNYX_PRESET,
  TWILIO_PRESET,
  detectPreset,
  type MediaStreamPreset,
  type MediaStreamPresetName,
} from './telephony/mediaStreamPresets.js';
export {
  mediaStreamServer,
  createMediaStreamServerStats,
  type MediaStreamCall,
  type MediaStreamServerOptions,
  type MediaStreamServerStats,
  type MediaTrack,
} from './telephony/mediaStreamServer.js';
export type { MediaStreamAuth, MediaStreamRefusal } from './telephony/mediaStreamAuth.js';
export {
  analyzeCalls,
  createAnalyzeCallsStats,
  type AnalyzableCall,
  type AnalyzeCallsOptions,
  type AnalyzeCallsStats,
  type CallAnalysis,
  type CallOutcome,
  type CallStatus,
} from './telephony/analyzeCalls.js';
