// The orchestration API (§4.5): job submission and polling, under `/platform` on the same
// server. Each running emulator gets its own job book; timings and faults come from a PlatformBehavior.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { z } from 'zod';
import { decodeAudio, DecodeFailure } from './decode.js';
import { fileResult, speechMs } from './jobResults.js';
import { consumeBody } from './multipart.js';
import {
  FAILURE_DETAIL,
  JobBook,
  MULTI_FILE_MAX_BYTES,
  SINGLE_FILE_MAX_BYTES,
  jobStatusAt,
  type EmulatedJob,
  type PlatformBehavior,
} from './jobs.js';
import { acceptBody, refuse, sendJson, type EmulatorContext, type HttpRoute } from './routes.js';
import { PLATFORM_PATHS } from '../schema/endpoints.js';

/** Where the orchestration API is mounted on the emulator (`RunningEmulator.platformUrl`). */
export const PLATFORM_PREFIX = '/platform';

/** §2.1's extensions, accepted with or without the dot. */
const EXTENSIONS = ['aac', 'aiff', 'flac', 'mp3', 'mp4', 'mov', 'ogg', 'opus', 'wav', 'webm'];

const SubmitBodySchema = z.looseObject({
  submission_type: z.string().optional(),
  job_id: z.string().min(1).optional(),
  finalize_job: z.boolean().optional(),
  audio_base64: z.string().optional(),
  file_extension: z.string().optional(),
  filename: z.string().optional(),
  flags: z.looseObject({ emotion_annotation: z.boolean().optional(), demographics: z.boolean().optional() }).optional(),
});
type SubmitBody = z.infer<typeof SubmitBodySchema>;

const UNAVAILABLE = 'Service temporarily unavailable. Please try again later.';
const UNDECODABLE = 'The audio could not be processed. It may be corrupted or in an unsupported format.';

/** Largest request body read: a base64 multi-file upload plus room for the JSON around it. */
const MAX_BODY_BYTES = Math.ceil((MULTI_FILE_MAX_BYTES * 4) / 3) + 1024 * 1024;

class HttpFailure extends Error {
  constructor(readonly status: number, readonly detail: unknown) {
    super(typeof detail === 'string' ? detail : 'validation error');
  }
}

function header(req: IncomingMessage, name: string): string | undefined {
  const v = req.headers[name];
  return Array.isArray(v) ? v[0] : v;
}

/** §5.2: both headers on every request. The message names neither value. */
function checkAuth(req: IncomingMessage, ctx: EmulatorContext): void {
  const account = header(req, 'accountuuid');
  const key = header(req, 'apikey');
  if (!account || !key) throw new HttpFailure(401, 'Missing accountuuid or apikey header.');
  if (account !== ctx.platform.accountUuid || key !== ctx.platform.apiKey) throw new HttpFailure(401, 'Invalid account UUID or API key.');
}

/** The body, at most MAX_BODY_BYTES: a larger one (declared or sent) is refused with 413 where it stands, not read on. */
async function readBody(req: IncomingMessage): Promise<Buffer> {
  const tooLarge = new HttpFailure(413, 'Request body too large.');
  if (Number(req.headers['content-length'] ?? 0) > MAX_BODY_BYTES) throw tooLarge;
  const chunks: Buffer[] = [];
  let size = 0;
  await consumeBody(req, (c) => {
    size += c.length;
    if (size > MAX_BODY_BYTES) throw tooLarge;
    chunks.push(c);
  });
  return Buffer.concat(chunks);
}

async function parseSubmit(req: IncomingMessage): Promise<SubmitBody> {
  const raw = await readBody(req);
  let json: unknown;
  try {
    json = JSON.parse(raw.toString('utf8'));
  } catch {
    throw new HttpFailure(400, 'Invalid request.');
  }
  const parsed = SubmitBodySchema.safeParse(json);
  if (!parsed.success) {
    throw new HttpFailure(
      422,
      parsed.error.issues.map((i) => ({ loc: ['body', ...i.path.map((p) => (typeof p === 'symbol' ? String(p) : p))], msg: i.message, type: i.code })),
    );
  }
  return parsed.data;
}

function extensionOf(body: SubmitBody): string {
  const given = body.file_extension ?? (body.filename?.includes('.') ? body.filename.slice(body.filename.lastIndexOf('.') + 1) : undefined);
  if (given === undefined) throw new HttpFailure(422, [{ loc: ['body', 'file_extension'], msg: 'Field required', type: 'missing' }]);
  const ext = given.replace(/^\./, '').toLowerCase();
  if (!EXTENSIONS.includes(ext)) {
    throw new HttpFailure(400, `Unsupported file format '${ext}'. Supported formats: ${EXTENSIONS.map((e) => `.${e}`).join(', ')}`);
  }
  return ext;
}

function jobView(job: EmulatedJob, book: JobBook): Record<string, unknown> {
  const status = jobStatusAt(job, book.now(), book.behavior);
  return {
    job_id: job.jobId,
    status,
    submission_type: job.submissionType,
    files_received: job.files.length,
    api_calls_charged: job.files.length,
    estimated_processing_time: book.estimatedSeconds(),
    created_at: new Date(job.createdAt).toISOString(),
    finalized_at: job.finalizedAt === undefined ? null : new Date(job.finalizedAt).toISOString(),
    ...(status === 'completed' ? { results: { files: job.files.map((f, i) => fileResult(f, i, job.flags)) } } : {}),
    ...(status === 'failed' ? { error: book.behavior.failureDetail ?? FAILURE_DETAIL } : {}),
  };
}

async function submit(req: IncomingMessage, res: ServerResponse, book: JobBook): Promise<void> {
  const body = await parseSubmit(req);
  const flags = { emotion_annotation: body.flags?.emotion_annotation ?? false, demographics: body.flags?.demographics ?? false };

  if (body.submission_type !== undefined && body.submission_type !== 'realtime_websocket') {
    throw new HttpFailure(400, `Unsupported submission_type '${body.submission_type}'.`);
  }
  if (body.submission_type === 'realtime_websocket') {
    if (body.audio_base64 !== undefined || body.job_id !== undefined) throw new HttpFailure(400, 'A real-time submission carries no file and no job_id.');
    const job = book.create('realtime_websocket', flags);
    // The real realtime_url's form and credentials are not shown; the emulator points at its
    // own conversation streaming socket and puts no key in the URL.
    const realtimeUrl = `ws://${header(req, 'host') ?? '127.0.0.1'}/api/svc-2-streaming`;
    sendJson(res, 200, { ...jobView(job, book), realtime_url: realtimeUrl });
    return;
  }

  // A new job without `finalize_job: false` is a single-file job, finalized with this upload.
  const existing = body.job_id !== undefined ? book.get(body.job_id) : undefined;
  if (body.job_id !== undefined) {
    if (!existing) throw new HttpFailure(404, 'Job not found.');
    if (existing.submissionType !== 'batch') throw new HttpFailure(400, 'Files cannot be added to a real-time job.');
    if (existing.finalizedAt !== undefined) throw new HttpFailure(409, 'Job is already finalized.');
  }
  const singleFile = existing === undefined && body.finalize_job !== false;
  if (body.audio_base64 === undefined) throw new HttpFailure(422, [{ loc: ['body', 'audio_base64'], msg: 'Field required', type: 'missing' }]);
  if (!/^[A-Za-z0-9+/\s]*={0,2}\s*$/.test(body.audio_base64)) throw new HttpFailure(400, 'audio_base64 is not valid base64.');
  const ext = extensionOf(body);
  const bytes = Buffer.from(body.audio_base64, 'base64');
  if (bytes.length === 0) throw new HttpFailure(400, 'The uploaded file is empty.');
  const max = singleFile ? book.behavior.maxSingleFileBytes ?? SINGLE_FILE_MAX_BYTES : book.behavior.maxMultiFileBytes ?? MULTI_FILE_MAX_BYTES;
  if (bytes.length > max) {
    throw new HttpFailure(413, `The file is ${bytes.length} bytes; the limit of a ${singleFile ? 'single-file' : 'multi-file'} upload is ${max} bytes.`);
  }
  let decoded;
  try {
    decoded = await decodeAudio(bytes);
  } catch (err) {
    if (err instanceof DecodeFailure) throw new HttpFailure(400, UNDECODABLE);
    throw err;
  }
  const job = existing ?? book.create('batch', flags);
  if (existing && body.flags) job.flags = { emotion_annotation: job.flags.emotion_annotation || flags.emotion_annotation, demographics: job.flags.demographics || flags.demographics };
  job.files.push({
    filename: body.filename ?? `file-${job.files.length}.${ext}`,
    fileExtension: ext,
    bytes: bytes.length,
    durationMs: decoded.durationMs,
    speechMs: speechMs(decoded.samples, decoded.sampleRate),
  });
  if (singleFile || body.finalize_job === true) book.finalize(job);
  sendJson(res, 200, jobView(job, book));
}

function status(req: IncomingMessage, res: ServerResponse, url: URL, book: JobBook): void {
  const prefix = `${PLATFORM_PREFIX}${PLATFORM_PATHS.jobStatus}`;
  let jobId: string;
  try {
    jobId = decodeURIComponent(url.pathname.slice(prefix.length));
  } catch {
    throw new HttpFailure(404, 'Job not found.');
  }
  const job = book.get(jobId);
  if (!job) throw new HttpFailure(404, 'Job not found.');
  job.polls += 1;
  if (book.behavior.transientPolls?.includes(job.polls)) {
    const s = book.behavior.transientStatus ?? 503;
    throw new HttpFailure(s, s === 504 ? 'The request timed out. Please try again.' : s === 502 ? 'Unable to validate request. Please try again.' : UNAVAILABLE);
  }
  sendJson(res, 200, jobView(job, book));
}

/**
 * The orchestration routes with a given behavior. Pass them as `startEmulator({ routes })`
 * to script timings and faults: extra routes are tried before the built-in ones, so they
 * replace the default `platformRoutes` for that emulator.
 *
 * ## Example
 * ```ts
 * import { startEmulator, createPlatformRoutes } from 'svc-stream/emulator';
 *
 * const emu = await startEmulator({ routes: createPlatformRoutes({ outcome: 'never' }) });
 * ```
 */
export function createPlatformRoutes(behavior: PlatformBehavior = {}): HttpRoute[] {
  // One job book per running emulator: the context object is created once per start.
  const books = new WeakMap<EmulatorContext, JobBook>();
  const bookFor = (ctx: EmulatorContext): JobBook => {
    let b = books.get(ctx);
    if (!b) books.set(ctx, (b = new JobBook(behavior)));
    return b;
  };
  const guard =
    (handler: (req: IncomingMessage, res: ServerResponse, url: URL, book: JobBook) => void | Promise<void>) =>
    async (req: IncomingMessage, res: ServerResponse, url: URL, ctx: EmulatorContext): Promise<void> => {
      try {
        // Both headers are checked before the body is read (and before `100 Continue`).
        checkAuth(req, ctx);
        acceptBody(req, res);
        await handler(req, res, url, bookFor(ctx));
      } catch (err) {
        if (!(err instanceof HttpFailure)) throw err;
        // Whatever of the body is unread stays unread: the connection is closed instead.
        refuse(req, res, err.status, { detail: err.detail });
      }
    };
  return [
    { method: 'POST', path: `${PLATFORM_PREFIX}${PLATFORM_PATHS.submit}`, authenticatesFirst: true, handler: guard((req, res, _url, book) => submit(req, res, book)) },
    { method: 'GET', path: `${PLATFORM_PREFIX}${PLATFORM_PATHS.jobStatus}*`, authenticatesFirst: true, handler: guard(status) },
  ];
}

/** Routes of the orchestration API with the default (fast, always completing) behavior. */
export const platformRoutes: readonly HttpRoute[] = createPlatformRoutes();

export type { PlatformBehavior, JobOutcome, EmulatedJobStatus } from './jobs.js';
