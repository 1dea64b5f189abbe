// Batch endpoints of the models API (§4.1, §4.2, §4.4) and the preset listing: multipart
// upload to a temp file, the §7.1 checks in the service's order, real decoding, limits.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { extname } from 'node:path';
import { parseConfigFrame } from './streamingProtocol.js';
import type { Model, Organization } from './accounts.js';
import {
  audioEventResult,
  emotionResult,
  heardNote,
  signalFeatures,
  speechHeard,
  syntheticVoiceScore,
  voiceSegments,
  type SignalFeatures,
} from './batchAnalysis.js';
import { decodeAudio, DecodeFailure } from './decode.js';
import { multipartBoundary, MultipartError, parseMultipart, type ParsedForm } from './multipart.js';
import { PRESETS } from './presets.js';
import { acceptBody, DEFAULT_EMULATOR_LIMITS, refuse, sendJson, type EmulatorContext, type HttpRoute } from './routes.js';
import { describeByteLimit, MAX_UPLOAD_BYTES } from '../schema/limits.js';
import { EMULATOR_HEADER } from '../schema/emulatorHeader.js';
import { ENDPOINTS, pathAndModel } from '../schema/endpoints.js';

/** The extensions of §2.1, in the order the service lists them. */
export const BATCH_EXTENSIONS = ['.aac', '.aiff', '.flac', '.mp3', '.mp4', '.mov', '.ogg', '.opus', '.wav', '.webm'] as const;
/** The upload limit of §8: 100 MB read as 100 000 000 bytes, the client's number (schema/limits.ts). */
export { MAX_UPLOAD_BYTES };
/** Synthetic voice detection needs at least this much audio (wire reference). */
export const MIN_SYNTHETIC_VOICE_MS = 500;

/** The `detail` texts of the batch endpoints (§7.1, wire reference). */
export const BATCH_DETAILS = {
  unsupportedFormat: `Unsupported file format. Supported formats: ${BATCH_EXTENSIONS.join(', ')}`,
  emptyFile: 'The uploaded file is empty.',
  corruptAudio: 'The audio file could not be processed. It may be corrupted or in an unsupported format.',
  invalidRequest: 'Invalid request.',
  invalidKey: 'Invalid API key.',
  notPermitted: 'This request is not permitted.',
  noAccess: 'This API key does not have access to this model.',
  tooLarge: `File too large. The maximum upload size is ${describeByteLimit(MAX_UPLOAD_BYTES)}.`,
  timeout: 'The request timed out. Please try again.',
  tooShort: 'Audio is too short for analysis. Synthetic voice detection needs at least 0.5 seconds of audio.',
  invalidConfig: 'Invalid configuration.',
} as const;

type Fields = ReadonlyMap<string, string>;
/**
 * An answer: its status and body; what its stand-in could not measure (said beside it, where
 * the contract's body cannot); and what the stand-ins heard, for the emulator's header.
 */
type Computed = { readonly status: number; readonly body: unknown; readonly notMeasured?: string | undefined; readonly heard?: string | undefined };

interface BatchRoute {
  readonly path: string;
  readonly model: Model;
  /** Synthetic voice detection answers 403 for an invalid key and for every limit (§5.1 rule 4, §7.2 rule 2). */
  readonly everything403?: boolean | undefined;
  /** Extra form fields checked before anything else (FastAPI validates them with the header). */
  readonly validate?: ((fields: Fields) => ValidationEntry[]) | undefined;
  readonly compute: (f: SignalFeatures, fields: Fields) => Computed;
}

interface ValidationEntry {
  readonly loc: (string | number)[];
  readonly msg: string;
  readonly type: string;
  readonly input?: unknown | undefined;
}

const missing = (loc: (string | number)[]): ValidationEntry => ({ loc, msg: 'Field required', type: 'missing', input: null });

const BOOLEAN_TEXT = /^(true|false|1|0|yes|no|on|off|t|f|y|n)$/i;
function booleanField(name: string): (fields: Fields) => ValidationEntry[] {
  return (fields) => {
    const v = fields.get(name);
    if (v === undefined || BOOLEAN_TEXT.test(v.trim())) return [];
    return [{ loc: ['body', name], msg: 'Input should be a valid boolean, unable to interpret input', type: 'bool_parsing', input: v }];
  };
}

const sttResult = (f: SignalFeatures, language: string | null): Computed => {
  const segments = voiceSegments(f).map((s, i) => ({ ...s, speaker_label: String((i % 2) + 1), text: '' }));
  return { status: 200, body: { text: '', language, duration_ms: f.durationMs, segments } };
};

/** How the emulator answers each batch endpoint of the one table (which gives its path and model). */
export const BATCH_ROUTES: readonly BatchRoute[] = [
  { ...pathAndModel('audioEvents'), compute: (f) => ({ status: 200, body: audioEventResult(f), ...(speechHeard(f) ? { notMeasured: 'sound events under speech' } : {}) }) },
  {
    ...pathAndModel('emotion'),
    validate: (fields) => [...booleanField('training_permitted')(fields), ...booleanField('use_ensemble')(fields)],
    compute: (f) => ({ status: 200, body: emotionResult(f), notMeasured: 'emotion: speech reads Neutral, anything else Unknown' }),
  },
  { ...pathAndModel('stt'), compute: (f) => sttResult(f, 'en') },
  { ...pathAndModel('sttEnglishVfast'), compute: (f) => sttResult(f, 'en') },
  { ...pathAndModel('sttMultilingualVfast'), compute: (f) => sttResult(f, null) },
  {
    ...pathAndModel('syntheticVoiceDetection'),
    everything403: true,
    compute: (f) => {
      if (f.durationMs < MIN_SYNTHETIC_VOICE_MS) return { status: 422, body: { detail: BATCH_DETAILS.tooShort } };
      const score = syntheticVoiceScore(f);
      return { status: 200, body: { deepfake_score: score, is_synthetic: score >= 0.5, duration_ms: f.durationMs } };
    },
  },
  {
    ...pathAndModel('piiPhiRedaction'),
    compute: (f) => ({
      status: 200,
      body: { text: '', redacted_text: '', entities: [], segments: voiceSegments(f).map((s) => ({ ...s, text: '' })), duration_ms: f.durationMs },
    }),
  },
  {
    ...pathAndModel('conversation'),
    validate: (fields) => (fields.has('config') ? [] : [missing(['body', 'config'])]),
    compute: (f, fields) => {
      const config = conversationConfig(fields.get('config') ?? 'default');
      if (config === undefined) return { status: 400, body: { detail: BATCH_DETAILS.invalidConfig } };
      const clips = voiceSegments(f).map((s, i) => ({
        clip_uuid: `clip-${i + 1}`,
        text: '',
        start_ms: s.start_ms,
        duration_ms: s.duration_ms,
        speaker_label: String((i % 2) + 1),
        language: 'en',
        emotion: null,
        accent: null,
        deepfake_score: null,
      }));
      return {
        status: 200,
        body: {
          duration_ms: f.durationMs,
          clips,
          conversation_type: null,
          participant_roles: [],
          behavior_detections: [],
          topics: config.produce_topics === false ? null : [],
          topic_sentiments: config.produce_topic_sentiments === false ? null : [],
          summary: null,
        },
      };
    },
  },
];

/** The config field as a BatchConfig (`default` is `{}`); undefined when invalid or naming an unknown preset. */
function conversationConfig(text: string): Record<string, unknown> | undefined {
  const config = parseConfigFrame(text.trim());
  return config === 'default' ? {} : (config as Record<string, unknown> | undefined);
}

function header(req: IncomingMessage, name: string): string | undefined {
  const v = req.headers[name];
  return Array.isArray(v) ? v[0] : v;
}

/** 403 `not permitted` for an organization with no model at all; `no access` when only this one is missing. */
function accessDenial(org: Organization, model: Model): string | undefined {
  if (org.models.size === 0) return BATCH_DETAILS.notPermitted;
  if (!org.models.has(model)) return BATCH_DETAILS.noAccess;
  return undefined;
}

async function handleBatch(endpoint: BatchRoute, req: IncomingMessage, res: ServerResponse, ctx: EmulatorContext): Promise<void> {
  // Authentication comes before a single byte of the body is read: an unauthenticated client
  // must not make the emulator buffer or spool anything (§5.1 rules 4 and 6, §7.1). The answer
  // goes out at once and the connection is closed without draining the body (`refuse`).
  const key = header(req, 'x-api-key');
  if (key === undefined) return refuse(req, res, 422, { detail: [missing(['header', 'x-api-key'])] });
  const deny = endpoint.everything403 ? 403 : undefined;
  const org = ctx.accounts.find(key);
  if (!org) return refuse(req, res, deny ?? 401, { detail: BATCH_DETAILS.invalidKey });
  const denial = accessDenial(org, endpoint.model);
  if (denial) return refuse(req, res, 403, { detail: denial });

  const boundary = multipartBoundary(header(req, 'content-type'));
  // Not a form: FastAPI finds no parts, so the file is "missing"; the body is not read.
  if (!boundary) return refuse(req, res, 422, { detail: [missing(['body', 'upload_file']), ...(endpoint.validate?.(new Map()) ?? [])] });
  acceptBody(req, res);
  const limits = ctx.limits ?? DEFAULT_EMULATOR_LIMITS;
  let form: ParsedForm | undefined;
  try {
    try {
      form = await parseMultipart(req, boundary, {
        maxFileBytes: MAX_UPLOAD_BYTES,
        spool: ['upload_file'],
        maxParts: limits.maxFormParts,
        maxFieldBytes: limits.maxFormFieldBytes,
      });
    } catch (err) {
      if (err instanceof MultipartError) return refuse(req, res, 400, { detail: BATCH_DETAILS.invalidRequest });
      // The client went away mid-upload: nobody to answer.
      ctx.log(`upload to ${endpoint.path} aborted: ${(err as Error).message}`);
      res.destroy();
      return;
    }

    // Request validation reports every missing or invalid parameter at once.
    const upload = form.files.get('upload_file');
    const fields: Fields = form.fields;
    const problems: ValidationEntry[] = [];
    if (!upload) problems.push(form.fields.has('upload_file')
      ? { loc: ['body', 'upload_file'], msg: 'Expected UploadFile, received: <class \'str\'>', type: 'value_error', input: fields.get('upload_file') }
      : missing(['body', 'upload_file']));
    problems.push(...(endpoint.validate?.(fields) ?? []));
    if (problems.length > 0) return sendJson(res, 422, { detail: problems });

    const file = upload!;
    const ext = extname(file.filename).toLowerCase();
    if (!(BATCH_EXTENSIONS as readonly string[]).includes(ext)) return sendJson(res, 400, { detail: BATCH_DETAILS.unsupportedFormat });
    if (file.size === 0) return sendJson(res, 400, { detail: BATCH_DETAILS.emptyFile });
    // 400, not 413: §4.1 lists 400 for every problem with the file itself and no 413 at all.
    if (file.tooLarge) return sendJson(res, 400, { detail: BATCH_DETAILS.tooLarge });

    const admission = ctx.accounts.admit(org, endpoint.model);
    if (!admission.ok) return sendJson(res, deny ?? 429, { detail: admission.detail });
    let reply: Computed;
    try {
      reply = await analyse(endpoint, file.path, fields, org, ctx);
    } finally {
      // Free the slot before answering, so a client that starts its next request on this
      // response never meets its own finished request.
      ctx.accounts.release(org, endpoint.model);
    }
    // What the stand-ins heard goes beside the answer (its body stays the contract's).
    if (reply.heard !== undefined) res.setHeader(EMULATOR_HEADER, reply.heard);
    sendJson(res, reply.status, reply.body);
  } finally {
    await form?.cleanup();
  }
}

async function analyse(endpoint: BatchRoute, path: string, fields: Fields, org: Organization, ctx: EmulatorContext): Promise<Computed> {
  let features: SignalFeatures;
  try {
    const audio = await decodeAudio(path);
    features = signalFeatures(audio.samples, audio.sampleRate, audio.durationMs);
  } catch (err) {
    if (err instanceof DecodeFailure && /took longer than/.test(err.message)) return { status: 504, body: { detail: BATCH_DETAILS.timeout } };
    if (err instanceof DecodeFailure) {
      ctx.log(`could not decode upload to ${endpoint.path}: ${err.message.split('\n')[0]}`);
      return { status: 400, body: { detail: BATCH_DETAILS.corruptAudio } };
    }
    throw err;
  }
  const reply = endpoint.compute(features, fields);
  if (reply.status !== 200) return reply;
  ctx.accounts.charge(org, endpoint.model, features.durationMs);
  return { ...reply, heard: heardNote(features, reply.notMeasured) };
}

/** Preset listing: key check, permission and credit check, consumes no usage and no slot. */
function presetsRoute(path: string, model: Model): HttpRoute {
  return {
    method: 'GET',
    path,
    handler: (req, res, _url, ctx) => {
      req.resume();
      const key = header(req, 'x-api-key');
      if (key === undefined) return sendJson(res, 422, { detail: [missing(['header', 'x-api-key'])] });
      const org = ctx.accounts.find(key);
      if (!org) return sendJson(res, 401, { detail: BATCH_DETAILS.invalidKey });
      if (!org.models.has(model)) return sendJson(res, 403, { detail: BATCH_DETAILS.notPermitted });
      if (org.credits <= 0) return sendJson(res, 429, { detail: 'Insufficient credits.' });
      sendJson(res, 200, { presets: PRESETS });
    },
  };
}

/** The methods a request can carry that may meet a batch path with the wrong one. */
const HTTP_METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'] as const;

/** 405 with `Allow` (as FastAPI answers) for every other method on a path that exists. */
function methodNotAllowed(path: string, allowed: string): HttpRoute[] {
  return HTTP_METHODS.filter((m) => m !== allowed).map((method) => ({
    method,
    path,
    handler: (req, res) => {
      req.resume();
      res.setHeader('allow', allowed);
      sendJson(res, 405, { detail: 'Method Not Allowed' });
    },
  }));
}

const PRESET_ENDPOINTS = [ENDPOINTS.streamingPresets, ENDPOINTS.batchPresets] as const;

/** Routes of the batch endpoints. */
export const batchRoutes: readonly HttpRoute[] = [
  ...BATCH_ROUTES.map((e): HttpRoute => ({ method: 'POST', path: e.path, authenticatesFirst: true, handler: (req, res, _url, ctx) => handleBatch(e, req, res, ctx) })),
  ...PRESET_ENDPOINTS.map((e) => presetsRoute(e.path, e.model)),
  ...BATCH_ROUTES.flatMap((e) => methodNotAllowed(e.path, 'POST')),
  ...PRESET_ENDPOINTS.flatMap((e) => methodNotAllowed(e.path, 'GET')),
];

/** The extension check, shared with tests: whether a file name would pass §2.1. */
export function hasBatchExtension(filename: string): boolean {
  return (BATCH_EXTENSIONS as readonly string[]).includes(extname(filename).toLowerCase());
}
