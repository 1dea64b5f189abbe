// Every endpoint of the contract, written once (§4, wire reference): its path, whether it is
// an HTTP request or a WebSocket, the model whose limits and usage it counts against, and the
// schemas of what goes in and comes out where the contract shows them. The client (batch
// calls, sessions, the orchestration client), the CLI and the emulator read this table; none
// of them writes a path or a model of its own.
import { BatchConfigSchema } from './config.js';
import { AudioParamsSchema } from './audio.js';
import { AudioEventResultSchema, EmotionResultSchema, PresetListSchema } from './batch.js';
import { ServerEventSchema } from './events.js';

/** The model families of the models API (§8): access, concurrency and usage are counted per model. */
export const MODELS = [
  'conversation',
  'audio-event',
  'emotion',
  'stt',
  'stt-english-vfast',
  'stt-multilingual-vfast',
  'synthetic-voice-detection',
  'pii-phi-redaction',
  'batch',
] as const;
/** A model family of the models API, one of {@link MODELS}. */
export type Model = (typeof MODELS)[number];

/** One endpoint of the models API. */
export interface EndpointDef {
  /** The path below the models API base URL. */
  readonly path: string;
  /** `ws`: a streaming WebSocket (§3); `http`: one request and one answer. */
  readonly kind: 'http' | 'ws';
  /** The model whose access, limits and usage it counts against (for the preset listings: access only). */
  readonly model: Model;
  /** `false` for the preset listings: no usage counted, no concurrency slot taken. Default `true`. */
  readonly metered?: false | undefined;
  /** What the request carries where the contract shows it (the config frame or field, the audio query). */
  readonly request?: { readonly config?: typeof BatchConfigSchema; readonly audioParams?: typeof AudioParamsSchema } | undefined;
  /** The schema of the success body, or of each event frame; absent where the contract does not show the shape. */
  readonly response?: typeof ServerEventSchema | typeof AudioEventResultSchema | typeof EmotionResultSchema | typeof PresetListSchema | undefined;
}

/** Every models API endpoint by name (§4.1–§4.4, wire reference). */
export const ENDPOINTS = {
  // Streaming (§3, §4.3, §4.4)
  conversationStreaming: {
    path: '/api/svc-2-streaming',
    kind: 'ws',
    model: 'conversation',
    request: { config: BatchConfigSchema, audioParams: AudioParamsSchema },
    response: ServerEventSchema,
  },
  sttStreaming: { path: '/api/svc-2-stt-streaming', kind: 'ws', model: 'stt', request: { audioParams: AudioParamsSchema } },
  syntheticVoiceDetectionStreaming: {
    path: '/api/svc-2-synthetic-voice-detection-streaming',
    kind: 'ws',
    model: 'synthetic-voice-detection',
    request: { audioParams: AudioParamsSchema },
  },
  piiPhiRedactionStreaming: { path: '/api/svc-2-pii-phi-redaction-streaming', kind: 'ws', model: 'pii-phi-redaction', request: { audioParams: AudioParamsSchema } },
  // Batch (§4.1, §4.2, §4.4): multipart upload of one file
  audioEvents: { path: '/api/svc-2-audio-event-classifier', kind: 'http', model: 'audio-event', response: AudioEventResultSchema },
  emotion: { path: '/api/svc-2-emotion-batch', kind: 'http', model: 'emotion', response: EmotionResultSchema },
  stt: { path: '/api/svc-2-stt-batch', kind: 'http', model: 'stt' },
  sttEnglishVfast: { path: '/api/svc-2-stt-batch-english-vfast', kind: 'http', model: 'stt-english-vfast' },
  sttMultilingualVfast: { path: '/api/svc-2-stt-batch-multilingual-vfast', kind: 'http', model: 'stt-multilingual-vfast' },
  syntheticVoiceDetection: { path: '/api/svc-2-synthetic-voice-detection-batch', kind: 'http', model: 'synthetic-voice-detection' },
  piiPhiRedaction: { path: '/api/svc-2-pii-phi-redaction-batch', kind: 'http', model: 'pii-phi-redaction' },
  conversation: { path: '/api/svc-2-batch', kind: 'http', model: 'batch', request: { config: BatchConfigSchema } },
  // The preset catalogues (wire reference): GET, no usage, no concurrency slot
  batchPresets: { path: '/api/svc-2-batch/list-presets', kind: 'http', model: 'batch', metered: false, response: PresetListSchema },
  streamingPresets: { path: '/api/svc-2-streaming/list-presets', kind: 'http', model: 'conversation', metered: false, response: PresetListSchema },
} as const satisfies Record<string, EndpointDef>;

/** The name of a models API endpoint in {@link ENDPOINTS}. */
export type EndpointName = keyof typeof ENDPOINTS;

type NamesWhere<K> = { [N in EndpointName]: (typeof ENDPOINTS)[N] extends K ? N : never }[EndpointName];
/** The streaming (WebSocket) endpoints' names. */
export type StreamingEndpointName = NamesWhere<{ readonly kind: 'ws' }>;
/** The batch upload endpoints' names: the metered HTTP endpoints. */
export type UploadEndpointName = Exclude<NamesWhere<{ readonly kind: 'http' }>, NamesWhere<{ readonly metered: false }>>;

/** An endpoint's path and model, for the tables that add their own columns (the emulator's routes, the batch calls). */
export function pathAndModel<N extends EndpointName>(name: N): { readonly path: (typeof ENDPOINTS)[N]['path']; readonly model: (typeof ENDPOINTS)[N]['model'] } {
  return { path: ENDPOINTS[name].path, model: ENDPOINTS[name].model };
}

/** The model a path counts against, for any path of {@link ENDPOINTS}; `undefined` for a path not in the table. */
export function modelOfPath(path: string): Model | undefined {
  for (const e of Object.values(ENDPOINTS) as readonly EndpointDef[]) if (e.path === path) return e.model;
  return undefined;
}

/**
 * The orchestration API's paths (§4.5, §5.2), below its own base URL (`SVC_PLATFORM_URL`).
 * Their bodies' schemas are in src/schema/platform.ts.
 */
export const PLATFORM_PATHS = {
  /** POST: every submission pattern (real-time, one file, several files). */
  submit: '/api_service',
  /** GET, followed by the URL-encoded job id. */
  jobStatus: '/api_service/job_status/',
} as const;
