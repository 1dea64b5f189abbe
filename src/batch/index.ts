// The batch API: one call per endpoint, the many-files runner, the shared limits and the
// retry policy.
export { BATCH_ENDPOINTS, PRESET_PATHS, type BatchEndpointName, type BatchModel } from './endpoints.js';
export { BATCH_FILE_EXTENSIONS, MAX_UPLOAD_BYTES, checkUploadFile, type CheckedFile } from './files.js';
export { Semaphore, batchLimiter, DEFAULT_BATCH_CONCURRENCY, MAX_BATCH_CONCURRENCY, type LimiterTarget } from './semaphore.js';
export { retryDelay, retryClassOf, retryByCause, stopsRun, RUN_STOPPING_CODES, type RetryPolicy, type RetryClass } from './retry.js';
export { batchCall, batchGet, type BatchOptions, type BatchCallSpec } from './request.js';
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
  configField,
  BatchJsonResultSchema,
  type BatchJsonResult,
  type EmotionOptions,
  type TranscribeOptions,
  type SttVariant,
  type ConversationBatchOptions,
  type ListPresetsOptions,
} from './calls.js';
export { overFiles, isFileResult, type FileOutcome, type FilesOptions, type FileCall } from './overFiles.js';
