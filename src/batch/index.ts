// 'svc-stream/batch': the synchronous batch endpoints (§4) — audio events, emotion,
// transcription, synthetic voice, redaction, whole-conversation analysis, presets — their
// result schemas, file checks, per-model concurrency bounds and retry policy.
/// <reference types="node" preserve="true" />

// Result schemas of the batch endpoints.
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
} from '../schema/batch.js';

// Calls, files and their bounds.
export { BATCH_ENDPOINTS, type BatchEndpointName, type BatchModel } from './endpoints.js';
export { BATCH_FILE_EXTENSIONS, MAX_UPLOAD_BYTES, checkUploadFile, type CheckedFile } from './files.js';
export {
  batchLimiter,
  DEFAULT_BATCH_CONCURRENCY,
  MAX_BATCH_CONCURRENCY,
} from './semaphore.js';
export {
  retryDelay,
  retryClassOf,
  retryByCause,
  stopsRun,
  RUN_STOPPING_CODES,
  type RetryPolicy,
  type RetryClass,
} from './retry.js';
export type { BatchOptions } from './request.js';
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
} from './calls.js';
export { overFiles, isFileResult, type FileOutcome, type FilesOptions, type FileCall } from './overFiles.js';
export { resultSource, emulatorNote, EMULATOR_HEADER, type ResultSource } from '../resultSource.js';
