// The public batch calls: one function per endpoint, each a cold Observable of the validated
// result, plus a Promise variant for code that does not use RxJS.
import { defer, lastValueFrom, map, type Observable } from 'rxjs';
import { z } from 'zod';
import { InputError } from '../errors/index.js';
import { AudioEventResultSchema, EmotionResultSchema, PresetListSchema, type AudioEventResult, type EmotionResult, type Preset } from '../schema/batch.js';
import type { SessionConfig } from '../schema/config.js';
import { configText } from '../schema/configText.js';
import { PRESET_PATHS, type BatchEndpointName } from './endpoints.js';
import { batchCall, batchGet, type BatchOptions } from './request.js';

/**
 * The result of an endpoint whose shape the contract does not show (§4.4): any JSON object,
 * every field kept as sent.
 */
const BatchJsonResultSchema = z.looseObject({});
/** Any JSON object returned by an endpoint whose response shape is not shown (§4.4), fields kept as sent. */
export interface BatchJsonResult {
  readonly [field: string]: unknown;
}

/**
 * Audio event detection (§4.1) for one file.
 *
 * Cold: one request per subscription. Emits one AudioEventResult (`probs` may hold any subset
 * of the 42 event names, or none) and completes. Errors as `batchCall` describes.
 *
 * ## Example
 * ```ts
 * import { detectAudioEvents } from 'svc-stream/batch';
 *
 * detectAudioEvents('samples/music-applause.wav').subscribe((r) => console.log(r.probs, r.duration_ms));
 * ```
 */
export function detectAudioEvents(path: string, options: BatchOptions = {}): Observable<AudioEventResult> {
  return batchCall(path, { endpoint: 'audioEvents', schema: AudioEventResultSchema }, options);
}

/** `detectAudioEvents` as a Promise. */
export function detectAudioEventsAsync(path: string, options: BatchOptions = {}): Promise<AudioEventResult> {
  return lastValueFrom(detectAudioEvents(path, options));
}

export interface EmotionOptions extends BatchOptions {
  /** Whether the service may use the audio for training. Sent only when set (service default true). */
  readonly trainingPermitted?: boolean | undefined;
  /** Ask for the ensemble model. Sent only when set (service default false). */
  readonly useEnsemble?: boolean | undefined;
}

function emotionFields(options: EmotionOptions): Record<string, string> {
  const fields: Record<string, string> = {};
  if (options.trainingPermitted !== undefined) fields['training_permitted'] = String(options.trainingPermitted);
  if (options.useEnsemble !== undefined) fields['use_ensemble'] = String(options.useEnsemble);
  return fields;
}

/**
 * Emotion detection (§4.2) for one file: a whole-file label and consecutive 15 s windows
 * (none when the file is shorter than one window).
 *
 * Cold: one request per subscription; emits one EmotionResult and completes.
 *
 * ## Example
 * ```ts
 * import { detectEmotion } from 'svc-stream/batch';
 *
 * detectEmotion('samples/call.wav').subscribe((r) => console.log(r.emotion, r.time_series.length));
 * ```
 */
export function detectEmotion(path: string, options: EmotionOptions = {}): Observable<EmotionResult> {
  return batchCall(path, { endpoint: 'emotion', schema: EmotionResultSchema, fields: emotionFields(options) }, options);
}

/** `detectEmotion` as a Promise. */
export function detectEmotionAsync(path: string, options: EmotionOptions = {}): Promise<EmotionResult> {
  return lastValueFrom(detectEmotion(path, options));
}

/** Which transcription variant: `standard` (`/api/svc-2-stt-batch`), `english-vfast` or `multilingual-vfast`. */
export type SttVariant = 'standard' | 'english-vfast' | 'multilingual-vfast';

const STT_ENDPOINTS: Readonly<Record<SttVariant, BatchEndpointName>> = {
  standard: 'stt',
  'english-vfast': 'sttEnglishVfast',
  'multilingual-vfast': 'sttMultilingualVfast',
};

export interface TranscribeOptions extends BatchOptions {
  /** Default `standard`. */
  readonly variant?: SttVariant | undefined;
}

/**
 * Speech-to-text batch (§4.4) for one file. The response shape is not shown by the contract:
 * emits the JSON object as sent. Cold, one request per subscription.
 */
export function transcribeFile(path: string, options: TranscribeOptions = {}): Observable<BatchJsonResult> {
  return defer(() => {
    const endpoint = STT_ENDPOINTS[options.variant ?? 'standard'];
    if (endpoint === undefined) {
      throw new InputError('invalid_argument', `variant must be one of ${Object.keys(STT_ENDPOINTS).join(', ')}, got ${JSON.stringify(options.variant)}`, { path: 'variant' });
    }
    return batchCall(path, { endpoint, schema: BatchJsonResultSchema }, options);
  });
}

/**
 * Synthetic voice detection batch (§4.4). Remember its quirk: it answers 403 for an invalid key
 * and for every limit, so the error's `code` (from `detail`) says which. Audio under 0.5 s is
 * refused with 422 (`audio_too_short`). Emits the JSON object as sent. Cold.
 */
export function detectSyntheticVoice(path: string, options: BatchOptions = {}): Observable<BatchJsonResult> {
  return batchCall(path, { endpoint: 'syntheticVoiceDetection', schema: BatchJsonResultSchema }, options);
}

/** PII/PHI redaction batch (§4.4). Emits the JSON object as sent. Cold. */
export function redactPiiPhi(path: string, options: BatchOptions = {}): Observable<BatchJsonResult> {
  return batchCall(path, { endpoint: 'piiPhiRedaction', schema: BatchJsonResultSchema }, options);
}

export interface ConversationBatchOptions extends BatchOptions {
  /** `default` (the default) or a BatchConfig, checked locally before upload. */
  readonly config?: SessionConfig | undefined;
}

/** The `config` form field: `default`, or the BatchConfig as JSON; InputError when invalid. */
export function configField(config: SessionConfig | undefined): string {
  return configText(config);
}

/**
 * Conversation analysis as one batch request (`POST /api/svc-2-batch`, wire reference): the
 * file plus a `config` field. Emits the JSON object as sent. Cold.
 */
export function analyzeConversationFile(path: string, options: ConversationBatchOptions = {}): Observable<BatchJsonResult> {
  // The config is checked at subscription, before the file and before any request.
  return defer(() => batchCall(path, { endpoint: 'conversation', schema: BatchJsonResultSchema, fields: { config: configField(options.config) } }, options));
}

/** Options of {@link listPresets}: the usual batch options (base URL, key, retries, signal) and which catalogue path to ask. */
export interface ListPresetsOptions extends Omit<BatchOptions, 'concurrency'> {
  /** Which catalogue path to ask: `batch` (default) or `streaming`; both list the same presets. */
  readonly from?: keyof typeof PRESET_PATHS | undefined;
}

/**
 * The behavior preset catalogue (wire reference). Consumes no usage and takes no concurrency
 * permit. Cold: one request per subscription; emits the presets and completes.
 *
 * ## Example
 * ```ts
 * import { listPresets } from 'svc-stream/batch';
 *
 * listPresets().subscribe((presets) => console.log(presets.map((p) => `preset:${p.identifier}`)));
 * ```
 */
export function listPresets(options: ListPresetsOptions = {}): Observable<Preset[]> {
  return defer(() => {
    const path = PRESET_PATHS[options.from ?? 'batch'];
    if (path === undefined) throw new InputError('invalid_argument', `from must be batch or streaming, got ${JSON.stringify(options.from)}`, { path: 'from' });
    return batchGet(path, PresetListSchema, options).pipe(map((list) => list.presets));
  });
}

/** `listPresets` as a Promise. */
export function listPresetsAsync(options: ListPresetsOptions = {}): Promise<Preset[]> {
  return lastValueFrom(listPresets(options));
}
