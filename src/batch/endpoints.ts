// The batch endpoints as the batch calls name them: a view of the one endpoints table
// (src/schema/endpoints.ts), which holds every path and model.
import { ENDPOINTS, pathAndModel } from '../schema/endpoints.js';

/** Every batch endpoint by name: its path and the model whose limits it uses. */
export const BATCH_ENDPOINTS = {
  audioEvents: pathAndModel('audioEvents'),
  emotion: pathAndModel('emotion'),
  stt: pathAndModel('stt'),
  sttEnglishVfast: pathAndModel('sttEnglishVfast'),
  sttMultilingualVfast: pathAndModel('sttMultilingualVfast'),
  syntheticVoiceDetection: pathAndModel('syntheticVoiceDetection'),
  piiPhiRedaction: pathAndModel('piiPhiRedaction'),
  conversation: pathAndModel('conversation'),
} as const;

/** A batch endpoint's name: `audioEvents`, `emotion`, `stt`, `sttEnglishVfast`, … */
export type BatchEndpointName = keyof typeof BATCH_ENDPOINTS;
/** The model a batch endpoint counts against (`audio-event`, `emotion`, …). */
export type BatchModel = (typeof BATCH_ENDPOINTS)[BatchEndpointName]['model'];

/** The two preset catalogue paths (wire reference); both consume no usage. */
export const PRESET_PATHS = {
  batch: ENDPOINTS.batchPresets.path,
  streaming: ENDPOINTS.streamingPresets.path,
} as const;
