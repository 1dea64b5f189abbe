// 'svc-stream/schema': the contract written as zod schemas, for those who validate what they
// send or receive themselves: audio parameters, the analysis config, the server events and
// their tolerant parser, the batch results, the orchestration API's replies, the error
// bodies. Types are `z.infer`red from these schemas; the main entry exports the same types.
/// <reference types="node" preserve="true" />

// Audio parameters (§4.3).
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
  type RawFormat,
  type ContainerFormat,
  type SampleRate,
  type RawFormatDescriptor,
  type AudioParams,
  type RawAudioFormat,
  type AudioFormat,
} from './audio.js';

// The analysis config (§2.4): the config frame and the batch `config` field.
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
} from './config.js';

// Server events (§2.5) and their tolerant parser (docs/tolerance.md).
export * from './events.js';
export * from './parseServerEvent.js';
export type { EventWarning } from '../warnings.js';

// Batch results (§2.2, §2.3, §4.1, §4.2) and the preset catalogue.
export {
  AUDIO_EVENT_NAMES,
  AudioEventNameSchema,
  AudioEventResultSchema,
  EMOTION_LABELS,
  EmotionLabelSchema,
  EmotionWindowSchema,
  EmotionResultSchema,
  PresetSchema,
  PresetListSchema,
  type AudioEventName,
  type AudioEventResult,
  type EmotionLabel,
  type EmotionWindow,
  type EmotionResult,
  type Preset,
  type PresetList,
} from './batch.js';

// The orchestration API's replies (§2.6, §4.5) and job statuses.
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
} from './platform.js';

// Error bodies (§6).
export {
  ErrorResponseSchema,
  ValidationErrorSchema,
  HTTPValidationErrorSchema,
  type ErrorResponse,
  type ValidationError,
  type HTTPValidationError,
} from '../errors/errorBody.js';

// The relay's wire: the messages of a session's event stream, the listing, refusals; and
// what the fleet dashboard's page is sent of each call.
export {
  RelayStatusSchema,
  RelayGapSchema,
  RelayResetSchema,
  RelayEndSchema,
  ErrorSummarySchema,
  RelaySessionInfoSchema,
  RelayListingSchema,
  RelayRefusalSchema,
} from './relay.js';
export { FleetCallSchema } from './fleetCall.js';

// What made a result (the service, the emulator, a scenario, a recording): the label every view shows.
export { ResultLabelSchema, RESULT_SOURCES, type ResultLabel } from './resultLabel.js';

// Genesys Cloud AudioHook's wire (the telephony entry's audioHookServer reads it).
export { AudioHookClientBaseSchema, AudioHookMediaSchema, AudioHookParticipantSchema, AudioHookOpenParametersSchema } from './audioHook.js';
