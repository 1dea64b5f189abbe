// The batch paths of the models API (§4.1, §4.2, §4.4, wire reference), each with the model
// its concurrency limit and usage count against.

/** Every batch endpoint by name: its path and the model whose limits it uses. */
export const BATCH_ENDPOINTS = {
  audioEvents: { path: '/api/svc-2-audio-event-classifier', model: 'audio-event' },
  emotion: { path: '/api/svc-2-emotion-batch', model: 'emotion' },
  stt: { path: '/api/svc-2-stt-batch', model: 'stt' },
  sttEnglishVfast: { path: '/api/svc-2-stt-batch-english-vfast', model: 'stt-english-vfast' },
  sttMultilingualVfast: { path: '/api/svc-2-stt-batch-multilingual-vfast', model: 'stt-multilingual-vfast' },
  syntheticVoiceDetection: { path: '/api/svc-2-synthetic-voice-detection-batch', model: 'synthetic-voice-detection' },
  piiPhiRedaction: { path: '/api/svc-2-pii-phi-redaction-batch', model: 'pii-phi-redaction' },
  conversation: { path: '/api/svc-2-batch', model: 'batch' },
} as const;

/** A batch endpoint's name: `audioEvents`, `emotion`, `stt`, `sttEnglishVfast`, … */
export type BatchEndpointName = keyof typeof BATCH_ENDPOINTS;
/** The model a batch endpoint counts against (`audio-event`, `emotion`, …). */
export type BatchModel = (typeof BATCH_ENDPOINTS)[BatchEndpointName]['model'];

/** The two preset catalogue paths (wire reference); both consume no usage. */
export const PRESET_PATHS = {
  batch: '/api/svc-2-batch/list-presets',
  streaming: '/api/svc-2-streaming/list-presets',
} as const;
