// One HTTP exchange on the wire, for src/internal/http.ts (which owns the redirect rule and
// what an answer means): over node:http(s) or a given fetch, the upload streamed with
// backpressure, the answer read within the time and size limits, every transport failure
// worded once.
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { asyncScheduler, type SchedulerLike, type Subscription } from 'rxjs';
import { SvcError } from '../errors/index.js';
import { EMULATOR_HEADER } from '../schema/emulatorHeader.js';
import type { HttpLimits } from '../httpLimits.js';

/** A request body, opened anew for each time it is sent (a followed 307/308 sends it again). */
export interface HttpBody {
  readonly contentType: string;
  /** Exact length in bytes. */
  readonly contentLength: number;
  open(): AsyncIterable<Uint8Array>;
}

/** One request, as src/internal/http.ts sends it. */
export interface HttpRequest extends HttpLimits {
  readonly method: 'GET' | 'POST';
  /** The request URL. Its origin is the only one that ever receives `headers`. */
  readonly url: URL;
  /** Headers, keys included. */
  readonly headers: Readonly<Record<string, string>>;
  readonly body?: HttpBody | undefined;
  /** What the request is, for messages: `POST /api/svc-2-emotion-batch (call.wav)`. */
  readonly context: string;
  /** The keys this request carries: masked in every error it fails with. */
  readonly secrets: readonly string[];
  /** Aborting destroys the exchange and fails it with `aborted`. */
  readonly signal?: AbortSignal | undefined;
  /** A fetch to use instead of node:http(s), for the edge (proxies, tests). The same rules apply. */
  readonly fetch?: typeof fetch | undefined;
  /** Scheduler of the time limits. Default `asyncScheduler`. */
  readonly scheduler?: SchedulerLike | undefined;
}

/** The response limits of one request, checked. */
export interface Limits {
  readonly headersTimeoutMs: number;
  readonly idleTimeoutMs: number;
  readonly maxResponseBytes: number;
}

/** One hop: a redirect (its Location) or a final answer (its raw body). */
/** `emulated`: the emulator's mark on the answer (EMULATOR_HEADER), when it gave it. */
export type Hop = { readonly status: number; readonly location: string | undefined; readonly body: Buffer | undefined; readonly emulated?: string | undefined };

/** The statuses that redirect. */
export const REDIRECTS = new Set([301, 302, 303, 307, 308]);

function headerText(v: string | string[] | undefined): string | undefined {
  return Array.isArray(v) ? v.join(', ') : v;
}

/** Why a low-level failure happened, in one line (undici hides the reason in `cause`). */
function why(err: unknown): string {
  if (!(err instanceof Error)) return String(err);
  const cause = err.cause instanceof Error && err.cause.message !== err.message ? ` (${err.cause.message})` : '';
  return `${err.message}${cause}`;
}

/** The failures of the exchange itself, each worded once. */
export function failures(req: HttpRequest, limits: Limits) {
  const o = { secrets: req.secrets };
  return {
    aborted: () => new SvcError('aborted', `${req.context} was aborted`, { ...o, cause: req.signal?.reason }),
    noAnswer: (err: unknown) =>
      new SvcError('connection_failed', `${req.context} got no answer from ${req.url.origin}: ${why(err)}`, { ...o, retryable: true, cause: err }),
    lost: (err: unknown) =>
      new SvcError('connection_lost', `${req.context}: the connection dropped while the answer was read: ${why(err)}`, { ...o, retryable: true, cause: err }),
    headersLate: () =>
      new SvcError('response_timeout', `${req.context}: no response headers within ${limits.headersTimeoutMs} ms (headersTimeoutMs)`, { ...o, retryable: true }),
    bodyStalled: () =>
      new SvcError('response_timeout', `${req.context}: the answer stalled, no bytes for ${limits.idleTimeoutMs} ms (idleTimeoutMs)`, { ...o, retryable: true }),
    uploadStalled: () =>
      new SvcError('response_timeout', `${req.context}: the upload stalled, the server took no bytes for ${limits.idleTimeoutMs} ms (idleTimeoutMs)`, { ...o, retryable: true }),
    tooLarge: (size: number, declared: boolean) =>
      new SvcError(
        'response_too_large',
        `${req.context}: the answer is larger than maxResponseBytes=${limits.maxResponseBytes} (${declared ? `declared ${size} bytes` : `over ${size - 1} bytes read`}); the connection was closed`,
        { ...o, retryable: false },
      ),
    redirect: (status: number, what: string) =>
      new SvcError('redirect_refused', `${req.context} was redirected (${status}) ${what}: not followed, the keys go only to ${req.url.origin}`, {
        ...o,
        status,
        retryable: false,
      }),
  };
}
/** The failures of one request, each worded once. */
export type Failures = ReturnType<typeof failures>;

/**
 * A time limit on the scheduler. `start` arms it; `touch` pushes an idle limit on (a limit that
 * is never touched is a plain deadline); firing calls `expire` once with the error it was armed with.
 */
class Watchdog {
  #sub: Subscription | undefined;
  #last = 0;
  #ms = 0;
  #make: (() => SvcError) | undefined;
  constructor(private readonly scheduler: SchedulerLike, private readonly expire: (err: SvcError) => void) {}

  start(ms: number, make: () => SvcError): void {
    this.stop();
    if (ms <= 0) return;
    this.#ms = ms;
    this.#make = make;
    this.#last = this.scheduler.now();
    this.#schedule(ms);
  }

  touch(): void {
    this.#last = this.scheduler.now();
  }

  stop(): void {
    this.#sub?.unsubscribe();
    this.#sub = undefined;
  }

  #schedule(delay: number): void {
    this.#sub = this.scheduler.schedule(() => {
      const quiet = this.scheduler.now() - this.#last;
      if (quiet >= this.#ms) this.expire(this.#make!());
      else this.#schedule(this.#ms - quiet);
    }, delay);
  }
}

/** The body pulled through `onChunk` (each pull is the socket asking for more). */
async function* counted(body: AsyncIterable<Uint8Array>, onChunk: () => void): AsyncGenerator<Uint8Array> {
  for await (const chunk of body) {
    onChunk();
    yield chunk;
  }
}

/** One exchange over node:http(s): streams the upload with backpressure, reads the answer within the limits. */
export function exchangeNode(req: HttpRequest, url: URL, method: string, limits: Limits, fail: Failures): Promise<Hop> {
  return new Promise<Hop>((resolve, reject) => {
    let settled = false;
    const watchdog = new Watchdog(req.scheduler ?? asyncScheduler, (err) => abandon(err));
    const headers: Record<string, string> = { ...req.headers };
    if (req.body) {
      headers['content-type'] = req.body.contentType;
      headers['content-length'] = String(req.body.contentLength);
    }
    const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
    const r = send(url, { method, headers });
    const cleanup = (): void => {
      watchdog.stop();
      req.signal?.removeEventListener('abort', onAbort);
    };
    const abandon = (err: SvcError): void => {
      if (settled) return;
      settled = true;
      cleanup();
      r.destroy();
      reject(err);
    };
    const finish = (hop: Hop): void => {
      if (settled) return;
      settled = true;
      cleanup();
      resolve(hop);
    };
    const onAbort = (): void => abandon(fail.aborted());
    if (req.signal?.aborted) {
      abandon(fail.aborted());
      return;
    }
    req.signal?.addEventListener('abort', onAbort, { once: true });

    let responded = false;
    let failure: unknown;
    r.on('error', (err) => (failure ??= err));
    // The service may answer (401, 413, 429…) before it has read the whole upload and then
    // close: that answer wins over the broken pipe that follows it. Without an answer by the
    // time the request closes, the first failure is the outcome.
    r.once('close', () => {
      if (!responded) abandon(fail.noAnswer(failure ?? new Error('the connection closed before an answer')));
    });
    r.once('finish', () => {
      if (!responded && !settled) watchdog.start(limits.headersTimeoutMs, fail.headersLate);
    });
    r.once('response', (res: IncomingMessage) => {
      responded = true;
      const status = res.statusCode ?? 0;
      if (REDIRECTS.has(status)) {
        // A redirect's body is never read: the socket goes.
        finish({ status, location: res.headers.location, body: undefined });
        r.destroy();
        return;
      }
      const declared = Number(res.headers['content-length']);
      if (Number.isFinite(declared) && declared > limits.maxResponseBytes) {
        abandon(fail.tooLarge(declared, true));
        return;
      }
      const chunks: Buffer[] = [];
      let size = 0;
      watchdog.start(limits.idleTimeoutMs, fail.bodyStalled);
      res.on('data', (c: Buffer) => {
        if (settled) return;
        size += c.length;
        if (size > limits.maxResponseBytes) {
          abandon(fail.tooLarge(size, false));
          return;
        }
        chunks.push(c);
        watchdog.touch();
      });
      res.once('end', () => finish({ status, location: undefined, body: Buffer.concat(chunks), emulated: headerText(res.headers[EMULATOR_HEADER]) }));
      res.on('error', (err) => abandon(fail.lost(err)));
      res.once('close', () => {
        if (!res.complete) abandon(fail.lost(new Error('the connection closed before the end of the answer')));
      });
    });

    if (req.body) {
      watchdog.start(limits.idleTimeoutMs, fail.uploadStalled);
      const source = Readable.from(counted(req.body.open(), () => { if (!responded) watchdog.touch(); }), { objectMode: false });
      pipeline(source, r).catch((err: unknown) => {
        failure ??= err;
        // After an answer, the answer decides; before it, the broken upload does (at close).
        if (!responded) r.destroy();
      });
    } else {
      r.end();
    }
  });
}

/** One exchange through an injected fetch, under the same rules (the upload is sent whole). */
export async function exchangeFetch(f: typeof fetch, req: HttpRequest, url: URL, method: string, limits: Limits, fail: Failures): Promise<Hop> {
  if (req.signal?.aborted) throw fail.aborted();
  const controller = new AbortController();
  let expired: SvcError | undefined;
  const watchdog = new Watchdog(req.scheduler ?? asyncScheduler, (err) => {
    expired = err;
    controller.abort(err);
  });
  const onAbort = (): void => controller.abort(req.signal?.reason);
  req.signal?.addEventListener('abort', onAbort, { once: true });
  const outcome = (err: unknown, otherwise: (e: unknown) => SvcError): SvcError => expired ?? (req.signal?.aborted ? fail.aborted() : otherwise(err));
  try {
    const headers: Record<string, string> = { ...req.headers };
    let body: Uint8Array | undefined;
    if (req.body) {
      headers['content-type'] = req.body.contentType;
      const parts: Uint8Array[] = [];
      for await (const chunk of req.body.open()) parts.push(chunk);
      body = Buffer.concat(parts);
    }
    // Without a view of the upload, the headers limit counts from the start.
    watchdog.start(limits.headersTimeoutMs, fail.headersLate);
    let res: Response;
    try {
      res = await f(url, { method, headers, redirect: 'manual', signal: controller.signal, ...(body !== undefined ? { body } : {}) });
    } catch (err) {
      throw outcome(err, fail.noAnswer);
    }
    if (REDIRECTS.has(res.status)) {
      await res.body?.cancel().catch(() => undefined);
      return { status: res.status, location: res.headers.get('location') ?? undefined, body: undefined };
    }
    const declared = Number(res.headers.get('content-length') ?? NaN);
    if (Number.isFinite(declared) && declared > limits.maxResponseBytes) {
      await res.body?.cancel().catch(() => undefined);
      throw fail.tooLarge(declared, true);
    }
    const chunks: Uint8Array[] = [];
    let size = 0;
    watchdog.start(limits.idleTimeoutMs, fail.bodyStalled);
    if (res.body) {
      const reader = res.body.getReader();
      for (;;) {
        let step: Awaited<ReturnType<typeof reader.read>>;
        try {
          step = await reader.read();
        } catch (err) {
          throw outcome(err, fail.lost);
        }
        if (step.done) break;
        size += step.value.byteLength;
        if (size > limits.maxResponseBytes) {
          await reader.cancel().catch(() => undefined);
          controller.abort();
          throw fail.tooLarge(size, false);
        }
        chunks.push(step.value);
        watchdog.touch();
      }
    }
    return { status: res.status, location: undefined, body: Buffer.concat(chunks), emulated: res.headers.get(EMULATOR_HEADER) ?? undefined };
  } finally {
    watchdog.stop();
    req.signal?.removeEventListener('abort', onAbort);
  }
}
