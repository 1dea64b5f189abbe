// The public API of svc-stream. Operators over events live in 'svc-stream/operators'.
export * from './schema/index.js';
export * from './errors.js';
export { redactUrl } from './internal/redact.js';
export { AUDIO_META, withAudioMeta, audioMetaOf, type AudioChunk, type AudioObservable, type AudioSourceMeta, type FlowSlot } from './audio/meta.js';
export * from './session/index.js';
export * from './emulator/index.js';
