// 'svc-stream/batch': the synchronous batch endpoints (§4) — audio events, emotion,
// transcription, synthetic voice, redaction, whole-conversation analysis, presets — the
// operators that run them over many files, file checks, per-model concurrency bounds and the
// retry policy. Their result schemas are in 'svc-stream/schema'.
/// <reference types="node" preserve="true" />

export type { AudioEventName, AudioEventResult, EmotionLabel, EmotionWindow, EmotionResult, Preset, PresetList } from '../schema/batch.js';

// One call per file.
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
  type BatchJsonResult,
  type EmotionOptions,
  type TranscribeOptions,
  type SttVariant,
  type ConversationBatchOptions,
  type ListPresetsOptions,
} from './calls.js';

// Many files: paths in, one outcome per path out.
export { batchFiles, isFileResult, type FileOutcome, type FilesOptions, type FileCall } from './batchFiles.js';
export { tagFiles } from './tagFiles.js';
export { emotionFiles } from './emotionFiles.js';

// Files, bounds and retries.
export { BATCH_ENDPOINTS, type BatchEndpointName, type BatchModel } from './endpoints.js';
export { BATCH_FILE_EXTENSIONS, MAX_UPLOAD_BYTES, checkUploadFile, type CheckedFile } from './files.js';
export { batchLimiter } from './batchLimiter.js';
export { DEFAULT_BATCH_CONCURRENCY, MAX_BATCH_CONCURRENCY } from '../schema/limits.js';
export { retryDelay, retryClassOf, retryByCause, stopsRun, RUN_STOPPING_CODES, type RetryPolicy, type RetryClass } from './retry.js';

// Where a result came from: the service, or the emulator (which marks what it makes up).
export { resultSource, resultLabel, emulatorNote, EMULATOR_HEADER, type ResultSource } from '../resultSource.js';
export type { ResultLabel } from '../schema/resultLabel.js';
