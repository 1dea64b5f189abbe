// One batch call as a cold Observable: check the file, wait for a permit of the shared
// per-model limit, stream the file from disk as multipart, classify failures, retry by cause.
import { asyncScheduler, defer, from, Observable, switchMap, type SchedulerLike } from 'rxjs';
import type { z } from 'zod';
import { ApiError, InputError, SvcError } from '../errors/index.js';
import { requestJson, type HttpRequest } from '../internal/http.js';
import type { HttpLimits } from '../httpLimits.js';
import { modelsCredentials } from '../credentials.js';
import { BATCH_ENDPOINTS, type BatchEndpointName } from './endpoints.js';
import { checkUploadFile, type CheckedFile } from './files.js';
import { retryByCause, type RetryPolicy } from './retry.js';
import { slotsFor } from './batchLimiter.js';
import { underLimiter, type LimiterSource } from '../concurrency/limiter.js';
import { multipartBody } from './multipartBody.js';

/**
 * Options every batch call takes. The HttpLimits (`headersTimeoutMs`, `idleTimeoutMs`,
 * `maxResponseBytes`) bound each request; see docs/security.md.
 */
export interface BatchOptions extends HttpLimits {
  /** Models API key. Defaults to `SVC_API_KEY`. Sent only in the `X-API-Key` header. */
  readonly apiKey?: string | undefined;
  /** Models API base, e.g. `https://…` or the emulator's `http://127.0.0.1:…`. Defaults to `SVC_BASE_URL`. */
  readonly baseUrl?: string | undefined;
  /**
   * Requests to this model in flight at once, for this key and base URL, across the whole
   * process (1…25). Sets the shared limit; default 3 (§8).
   */
  readonly concurrency?: number | undefined;
  /**
   * Take the concurrency slot from this source instead of the process-wide semaphore: a
   * fleet's `createRedisLimits(…)`, shared by every process of the organization.
   */
  readonly limiter?: LimiterSource | undefined;
  /** Retry policy by cause, or `false` for none. Default: see RetryPolicy. */
  readonly retry?: RetryPolicy | false | undefined;
  /** Scheduler for every wait (tests use virtual time or tiny delays). Default `asyncScheduler`. */
  readonly scheduler?: SchedulerLike | undefined;
  /** Aborting cancels the upload in flight, any wait, and fails the call with code `aborted`. */
  readonly signal?: AbortSignal | undefined;
  /**
   * A fetch for requests without an upload (the preset listing), for the edge (proxies,
   * tests); the redirect rule and limits apply to it too. Default node:http(s), as uploads.
   */
  readonly fetch?: typeof fetch | undefined;
  /** Called before each retry's wait. */
  readonly onRetry?: ((err: unknown, attempt: number, delayMs: number) => void) | undefined;
}

/** What one call sends besides the file. */
export interface BatchCallSpec<T> {
  readonly endpoint: BatchEndpointName;
  /** Extra form fields (`config`, `training_permitted`, …). */
  readonly fields?: Readonly<Record<string, string>> | undefined;
  /** The schema the 200 body must satisfy. */
  readonly schema: z.ZodType<T>;
}

/** A hook that runs before every attempt; an error it returns fails the attempt unsent. */
export type AttemptGate = () => unknown;

function resolveTarget(options: BatchOptions): { apiKey: string; baseUrl: string } {
  const { apiKey, baseUrl } = modelsCredentials(options);
  try {
    const u = new URL(baseUrl);
    if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new Error(u.protocol);
  } catch {
    throw new InputError('invalid_argument', `baseUrl must be an http(s) URL, got ${JSON.stringify(baseUrl)}`, { path: 'baseUrl' });
  }
  return { apiKey, baseUrl };
}

/** The error an aborted call fails with. */
export function abortedError(signal: AbortSignal | undefined, what: string): SvcError {
  return new SvcError('aborted', `${what} was aborted`, { cause: signal?.reason });
}

/** Fail with `aborted` when the signal fires, tearing the source down (which aborts its fetch). */
export function abortable<T>(source: Observable<T>, signal: AbortSignal | undefined, what: string): Observable<T> {
  if (!signal) return source;
  return new Observable<T>((subscriber) => {
    if (signal.aborted) {
      subscriber.error(abortedError(signal, what));
      return;
    }
    const onAbort = (): void => subscriber.error(abortedError(signal, what));
    signal.addEventListener('abort', onAbort, { once: true });
    const inner = source.subscribe(subscriber);
    return () => {
      signal.removeEventListener('abort', onAbort);
      inner.unsubscribe();
    };
  });
}

/** The few batch refusals errorFromHttp leaves generic: a 422 for audio that is too short. */
function refineBatchError(err: ApiError): ApiError {
  if (err.status === 422 && typeof err.detail === 'string' && /too short/i.test(err.detail)) {
    return new ApiError('audio_too_short', err.message, { status: err.status, detail: err.detail, body: err.body, retryable: false });
  }
  return err;
}

/**
 * One HTTP request through the core (src/internal/http.ts) as a cold Observable under an
 * AbortController the subscription owns: unsubscribing aborts the upload or the wait for the
 * answer. Emits the validated 2xx body.
 */
export function httpCall<T>(request: Omit<HttpRequest, 'signal'>, schema: z.ZodType<T>): Observable<T> {
  return new Observable<T>((subscriber) => {
    const controller = new AbortController();
    requestJson({ ...request, signal: controller.signal }, schema, refineBatchError).then(
      (value) => {
        if (controller.signal.aborted) return;
        subscriber.next(value);
        subscriber.complete();
      },
      (err: unknown) => {
        if (controller.signal.aborted) return;
        subscriber.error(err);
      },
    );
    return () => controller.abort();
  });
}

/** The HttpLimits of `options`, passed on to each request. */
function limitsOf(options: HttpLimits): HttpLimits {
  return { headersTimeoutMs: options.headersTimeoutMs, idleTimeoutMs: options.idleTimeoutMs, maxResponseBytes: options.maxResponseBytes };
}

/**
 * Where the many-files operators put their AttemptGate on the options they pass down: a
 * symbol, so it survives `{ ...options }` in every call without being public API.
 */
export const ATTEMPT_GATE: unique symbol = Symbol('svc-stream.attemptGate');
type WithGate = { readonly [ATTEMPT_GATE]?: AttemptGate };

/**
 * Upload one file to one batch endpoint and emit its validated result.
 *
 * Cold: each subscription checks the file locally (no request for a file that fails), then
 * waits for a permit of the process-wide limit for this model, key and base URL, streams the
 * file from disk (a multipart body pulled 64 KiB at a time, never whole in memory) and emits the one result, then
 * completes. Errors with InputError (local checks), ApiError (service answers, classified by
 * `detail`), ContractError (a 200 body outside the contract) or SvcError (`connection_failed`,
 * `connection_lost`, `aborted`, and the HTTP core's `redirect_refused`, `response_too_large`,
 * `response_timeout`: see HttpLimits). Retries by cause before erroring (see RetryPolicy);
 * unsubscribing or aborting cancels the upload.
 */
export function batchCall<T>(path: string, spec: BatchCallSpec<T>, options: BatchOptions = {}): Observable<T> {
  const gate = (options as WithGate)[ATTEMPT_GATE];
  const endpoint = BATCH_ENDPOINTS[spec.endpoint];
  const context = `POST ${endpoint?.path ?? spec.endpoint}`;
  const call$ = defer(() => {
    if (!endpoint) throw new InputError('invalid_argument', `unknown batch endpoint ${JSON.stringify(spec.endpoint)}; one of ${Object.keys(BATCH_ENDPOINTS).join(', ')}`, { path: 'endpoint' });
    const target = resolveTarget(options);
    const limiter = slotsFor(options.limiter, { model: endpoint.model, baseUrl: target.baseUrl, apiKey: target.apiKey }, options.concurrency);
    const url = new URL(target.baseUrl.replace(/\/+$/, '') + endpoint.path);
    return from(checkUploadFile(path)).pipe(
      switchMap((file: CheckedFile) => {
        const attempt$ = underLimiter(
          limiter,
          defer(() => {
            const stop = gate?.();
            if (stop !== undefined) throw stop;
            // Streamed from disk as the socket takes it: never the whole file in memory.
            // Each iteration of its body reads the file anew (a followed 307/308 sends it again).
            const upload = multipartBody(spec.fields ?? {}, { field: 'upload_file', path: file.path, filename: file.filename, size: file.size });
            return httpCall(
              {
                method: 'POST',
                url,
                headers: { 'x-api-key': target.apiKey, accept: 'application/json' },
                body: { contentType: upload.contentType, contentLength: upload.contentLength, open: () => upload.body },
                context: `${context} (${file.filename})`,
                secrets: [target.apiKey],
                ...limitsOf(options),
              },
              spec.schema,
            );
          }),
        );
        return attempt$.pipe(retryByCause<T>(options.retry, options.scheduler ?? asyncScheduler, options.onRetry));
      }),
    );
  });
  return abortable(call$, options.signal, context);
}

/**
 * A GET to the models API with the key header, under the same retry policy (no permit:
 * preset listing consumes no usage).
 */
export function batchGet<T>(path: string, schema: z.ZodType<T>, options: BatchOptions = {}): Observable<T> {
  const context = `GET ${path}`;
  const call$ = defer(() => {
    const target = resolveTarget(options);
    const url = new URL(target.baseUrl.replace(/\/+$/, '') + path);
    return httpCall(
      { method: 'GET', url, headers: { 'x-api-key': target.apiKey, accept: 'application/json' }, context, secrets: [target.apiKey], fetch: options.fetch, ...limitsOf(options) },
      schema,
    ).pipe(
      retryByCause<T>(options.retry, options.scheduler ?? asyncScheduler, options.onRetry),
    );
  });
  return abortable(call$, options.signal, context);
}
