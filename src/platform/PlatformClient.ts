// The orchestration API client (§4.5, §5.2): its own base URL, account and key, the three
// submission patterns, and job polling as an observable. The key never leaves the headers.
import { distinctUntilChanged, type Observable } from 'rxjs';
import type { z } from 'zod';
import { ContractError, InputError, SvcError, ApiError } from '../errors/index.js';
import { jsonBody, requestJson } from '../internal/http.js';
import type { HttpLimits } from '../httpLimits.js';
import { redact } from '../redact.js';
import { JobError, JobUploadError } from './errors.js';
import { prepareFile, toBase64, SINGLE_FILE_MAX_BYTES, type AudioFileInput } from './files.js';
import { describeByteLimit } from '../schema/limits.js';
import { PLATFORM_PATHS } from '../schema/endpoints.js';
import { platformCredentials } from '../credentials.js';
import { poll, type PollOptions, type PollVerdict } from './poll.js';
import {
  JOB_COMPLETED,
  JOB_PENDING_STATES,
  JobStatusSchema,
  RealtimeSubmissionReplySchema,
  SubmissionReplySchema,
  type JobFlags,
  type JobStatus,
  type RealtimeSubmissionReply,
  type SubmissionReply,
} from '../schema/platform.js';

/**
 * Options of {@link PlatformClient}: the orchestration API base URL and its two credentials
 * (`accountuuid`, `apikey`, §5.2), each defaulting to an environment variable. The HttpLimits
 * (`headersTimeoutMs`, `idleTimeoutMs`, `maxResponseBytes`) bound every request of the client;
 * each call may override them.
 */
export interface PlatformClientOptions extends HttpLimits {
  /** Orchestration API base, e.g. `https://…` or the emulator's `…/platform`. Default `SVC_PLATFORM_URL`. */
  readonly baseUrl?: string | undefined;
  /** Header `accountuuid`. Default `SVC_ACCOUNT_UUID`. */
  readonly accountUuid?: string | undefined;
  /** Header `apikey`, the platform key (not a models API key). Default `SVC_PLATFORM_API_KEY`. */
  readonly apiKey?: string | undefined;
  /** Where the defaults are read. Default `process.env`. */
  readonly env?: NodeJS.ProcessEnv | undefined;
  /** A fetch for the edge (proxies, tests); the redirect rule and limits apply to it too. Default node:http(s). */
  readonly fetch?: typeof fetch | undefined;
}

/** Per-call options: the signal, and HttpLimits overriding the client's. */
export interface PlatformCallOptions extends HttpLimits {
  /** Cancels the call. */
  readonly signal?: AbortSignal | undefined;
}

/** Options of a job submission (§4.5): the analysis `flags`, the signal and per-call limits. */
export interface SubmitOptions extends PlatformCallOptions {
  /** Analysis switches, sent as `flags`. Default `{ emotion_annotation: false, demographics: false }`. */
  readonly flags?: JobFlags | undefined;
}

/** The result of a multi-file submission: the job and each upload's reply, in order. */
export interface MultiFileSubmission {
  readonly job_id: string;
  /** The status in the reply to the finalizing upload. */
  readonly status: string | undefined;
  readonly uploads: readonly SubmissionReply[];
}

/** Options of {@link PlatformClient.pollJob}: the {@link PollOptions} timing plus what to do with a status the client does not know. */
export interface PollJobOptions extends PollOptions {
  /**
   * Statuses that end the job as failed (`job_failed`, after emitting the record), matched
   * exactly. Default none: the contract shows only `completed`, so every other status keeps
   * the poll going until `deadlineMs`. `JOB_FAILED_STATES` is a ready list to pass here.
   */
  readonly failedStates?: readonly string[] | undefined;
  /** Statuses known to mean "still on its way", matched exactly. Default `JOB_PENDING_STATES`. */
  readonly pendingStates?: readonly string[] | undefined;
  /**
   * A status that is neither `completed`, in `failedStates`, nor in `pendingStates`: keep
   * polling (`poll`, the default, bounded by the deadline) or fail with `job_unknown_state`.
   */
  readonly onUnknownState?: 'poll' | 'error' | undefined;
}

const TRANSIENT_STATUSES = new Set([502, 503, 504]);

/** A poll failure worth another try: 502, 503, 504, no answer, or an answer that broke off or stalled. */
export function isTransientPollError(err: unknown): boolean {
  if (!(err instanceof SvcError)) return false;
  // A status request is a GET: asking again is safe.
  if (err.code === 'connection_failed' || err.code === 'connection_lost' || err.code === 'response_timeout') return true;
  return err instanceof ApiError && err.status !== undefined && TRANSIENT_STATUSES.has(err.status);
}

function failureText(job: JobStatus): string | undefined {
  for (const k of ['error', 'detail', 'message', 'error_message', 'reason']) {
    const v = (job as Record<string, unknown>)[k];
    if (typeof v === 'string' && v.length > 0) return v;
    if (v !== undefined && v !== null && typeof v === 'object') return JSON.stringify(v).slice(0, 300);
  }
  return undefined;
}

/**
 * The orchestration API client.
 *
 * ## Example
 * ```ts
 * import { PlatformClient } from 'svc-stream/platform';
 * import { lastValueFrom } from 'rxjs';
 *
 * const client = new PlatformClient(); // SVC_PLATFORM_URL, SVC_ACCOUNT_UUID, SVC_PLATFORM_API_KEY
 * const { job_id } = await client.submitFile('samples/call.wav', { flags: { emotion_annotation: true } });
 * const done = await lastValueFrom(client.pollJob(job_id));
 * console.log(done['results']);
 * ```
 */
export class PlatformClient {
  readonly baseUrl: string;
  readonly accountUuid: string;
  // A private field: never enumerated, inspected or serialized.
  readonly #apiKey: string;
  readonly #fetch: typeof fetch | undefined;
  readonly #limits: HttpLimits;

  constructor(options: PlatformClientOptions = {}) {
    const { baseUrl, accountUuid, apiKey } = platformCredentials(options, options.env ?? process.env);
    try {
      new URL(baseUrl);
    } catch {
      throw new InputError('invalid_argument', `orchestration API URL is not a URL: ${redact(baseUrl, [apiKey])}`, { path: 'baseUrl' });
    }
    this.baseUrl = baseUrl.replace(/\/+$/, '');
    this.accountUuid = accountUuid;
    this.#apiKey = apiKey;
    this.#fetch = options.fetch;
    this.#limits = { headersTimeoutMs: options.headersTimeoutMs, idleTimeoutMs: options.idleTimeoutMs, maxResponseBytes: options.maxResponseBytes };
  }

  /** (a) A real-time job: no file; the reply's `realtime_url` is where the stream goes. */
  async submitRealtime(options: SubmitOptions = {}): Promise<RealtimeSubmissionReply> {
    const body = { submission_type: 'realtime_websocket', ...(options.flags ? { flags: options.flags } : {}) };
    return this.#request('POST', PLATFORM_PATHS.submit, body, options, RealtimeSubmissionReplySchema);
  }

  /**
   * (b) A single-file job in one POST. Refused locally, with nothing sent, when the file is
   * missing, empty, of an unknown format, or above 5 MB (`file_too_large`).
   */
  async submitFile(file: AudioFileInput, options: SubmitOptions = {}): Promise<SubmissionReply> {
    const f = await prepareFile(file, 'file');
    const tooLarge = (size: number): InputError =>
      new InputError('file_too_large', `"${f.filename}" is ${size} bytes; a single-file job takes at most ${describeByteLimit(SINGLE_FILE_MAX_BYTES)}: use submitFiles`, { path: 'file' });
    if (f.size > SINGLE_FILE_MAX_BYTES) throw tooLarge(f.size);
    const bytes = await f.read();
    if (bytes.byteLength > SINGLE_FILE_MAX_BYTES) throw tooLarge(bytes.byteLength);
    return this.#request('POST', PLATFORM_PATHS.submit, this.#fileBody(f.filename, f.fileExtension, bytes, options.flags, {}), options, SubmissionReplySchema);
  }

  /**
   * (c) A multi-file job: one POST per file, strictly in order, the first creating the job,
   * the rest carrying its `job_id`, `finalize_job: true` only on the last. Every file is
   * checked before the first upload. If an upload fails, nothing more is sent (no
   * finalize) and the error is a JobUploadError naming the file and its index.
   */
  async submitFiles(files: readonly AudioFileInput[], options: SubmitOptions = {}): Promise<MultiFileSubmission> {
    if (files.length === 0) throw new InputError('invalid_argument', 'a multi-file job needs at least one file', { path: 'files' });
    const prepared = [];
    for (let i = 0; i < files.length; i++) prepared.push(await prepareFile(files[i]!, `files.${i}`));
    let jobId: string | undefined;
    const uploads: SubmissionReply[] = [];
    for (let i = 0; i < prepared.length; i++) {
      const f = prepared[i]!;
      const last = i === prepared.length - 1;
      try {
        const bytes = await f.read();
        const body = this.#fileBody(f.filename, f.fileExtension, bytes, options.flags, { ...(jobId !== undefined ? { job_id: jobId } : {}), finalize_job: last });
        const reply = await this.#request('POST', PLATFORM_PATHS.submit, body, options, SubmissionReplySchema);
        if (jobId !== undefined && reply.job_id !== jobId) {
          throw new ContractError('invalid_response', `the service answered upload ${i + 1} with job_id ${reply.job_id}, expected ${jobId}`, { retryable: false });
        }
        jobId = reply.job_id;
        uploads.push(reply);
      } catch (err) {
        throw new JobUploadError(err, { fileIndex: i, fileCount: prepared.length, filename: f.filename, jobId });
      }
    }
    const final = uploads[uploads.length - 1]!;
    return { job_id: jobId!, status: final.status, uploads };
  }

  /** One status request. */
  async getJob(jobId: string, options: PlatformCallOptions = {}): Promise<JobStatus> {
    if (typeof jobId !== 'string' || jobId.length === 0) throw new InputError('invalid_argument', 'job id must be a non-empty string', { path: 'jobId' });
    return this.#request('GET', `${PLATFORM_PATHS.jobStatus}${encodeURIComponent(jobId)}`, undefined, options, JobStatusSchema);
  }

  /**
   * Poll a job until it is `completed`.
   *
   * - Cold: each subscription polls on its own; the first request goes out at subscription.
   * - Emits the status record each time `status` changes (the first one included), so every
   *   status seen is reported, an unknown one too.
   * - Completes right after emitting the `completed` record, which carries the results. Only
   *   exactly `completed` ends the poll: the contract shows no other state, so `failed`,
   *   `error` or `Completed` keep it going until the deadline unless `failedStates` says otherwise.
   * - Errors with a JobError: `job_failed` on a status in `failedStates` (after emitting it),
   *   `poll_deadline` at `deadlineMs`, `job_unknown_state` when `onUnknownState` is `error`;
   *   with the ApiError itself on a non-transient answer (401, 404…); after more than
   *   `maxConsecutiveTransientErrors` 502/503/504/network failures in a row; `aborted` on the signal.
   * - Waits `intervalMs`, growing by `backoff` up to `maxIntervalMs`, all through `scheduler`.
   * - Unsubscribing cancels the timer and the in-flight request.
   */
  pollJob(jobId: string, options: PollJobOptions = {}): Observable<JobStatus> {
    const classify = (job: JobStatus): PollVerdict => {
      const s = job.status;
      if (s === JOB_COMPLETED) return { kind: 'done' };
      if ((options.failedStates ?? []).includes(s)) {
        const why = failureText(job);
        return { kind: 'failed', error: new JobError('job_failed', `job ${jobId} ended with status "${job.status}"${why ? `: ${redact(why, [this.#apiKey])}` : ''}`, { jobId, job, detail: why, secrets: [this.#apiKey] }) };
      }
      if (options.onUnknownState === 'error' && !(options.pendingStates ?? JOB_PENDING_STATES).includes(s)) {
        return { kind: 'failed', error: new JobError('job_unknown_state', `job ${jobId} reached status "${job.status}", which is neither completed, a failed state nor a known pending state`, { jobId, job, secrets: [this.#apiKey] }) };
      }
      return { kind: 'pending' };
    };
    return poll<JobStatus>(
      {
        check: (signal) => this.getJob(jobId, { signal }),
        classify,
        isTransient: isTransientPollError,
        deadlineError: (last, elapsedMs) =>
          new JobError('poll_deadline', `job ${jobId} was not completed within ${Math.round(elapsedMs)} ms${last ? ` (last status "${last.status}")` : ' (no status received)'}`, {
            jobId,
            job: last,
            retryable: true,
            secrets: [this.#apiKey],
          }),
        transientLimitError: (err, count) => {
          const e = err as SvcError;
          const message = `polling job ${jobId} gave up after ${count} transient failures in a row; last: ${e.message}`;
          return e instanceof ApiError
            ? new ApiError(e.code, message, { status: e.status, detail: e.detail, body: e.body, retryable: true, cause: e, secrets: [this.#apiKey] })
            : new SvcError(e.code, message, { retryable: true, cause: e, secrets: [this.#apiKey] });
        },
        abortedError: () => new JobError('aborted', `polling job ${jobId} was aborted`, { jobId }),
      },
      options,
    ).pipe(distinctUntilChanged((a, b) => a.status === b.status));
  }

  /** Never shows the key. */
  toJSON(): Record<string, string> {
    return { baseUrl: this.baseUrl, accountUuid: this.accountUuid };
  }

  #fileBody(filename: string, fileExtension: string, bytes: Uint8Array, flags: JobFlags | undefined, extra: Record<string, unknown>): Record<string, unknown> {
    return {
      ...extra,
      audio_base64: toBase64(bytes),
      file_extension: fileExtension,
      filename,
      flags: { emotion_annotation: false, demographics: false, ...flags },
    };
  }

  /** Every request of the client, through the one HTTP core (src/internal/http.ts). */
  #request<T>(method: 'GET' | 'POST', path: string, body: unknown, options: PlatformCallOptions, schema: z.ZodType<T>): Promise<T> {
    const headers: Record<string, string> = { accept: 'application/json', accountuuid: this.accountUuid, apikey: this.#apiKey };
    const pick = <K extends keyof HttpLimits>(k: K): HttpLimits[K] => options[k] ?? this.#limits[k];
    return requestJson(
      {
        method,
        url: new URL(`${this.baseUrl}${path}`),
        headers,
        body: body === undefined ? undefined : jsonBody(body),
        context: `orchestration ${method} ${path}`,
        secrets: [this.#apiKey],
        signal: options.signal,
        fetch: this.#fetch,
        headersTimeoutMs: pick('headersTimeoutMs'),
        idleTimeoutMs: pick('idleTimeoutMs'),
        maxResponseBytes: pick('maxResponseBytes'),
      },
      schema,
    );
  }
}
