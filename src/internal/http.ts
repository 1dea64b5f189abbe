// The one HTTP client of the library: every request to the models API (batch calls, preset
// listing) and to the orchestration API goes through `sendHttp`. It owns the redirect rule, the
// response limits (size, time) and what an answer means; the exchange on the wire and the
// wording of every transport failure are src/internal/httpExchange.ts's; `errorFromHttp` words
// the service's refusals. See docs/security.md.
import type { z } from 'zod';
import { ContractError, errorFromHttp, InputError, type ApiError } from '../errors/index.js';
import { HTTP_DEFAULTS, type HttpLimits } from '../httpLimits.js';
import { markEmulated } from '../resultSource.js';
import { exchangeFetch, exchangeNode, failures, REDIRECTS, type HttpBody, type HttpRequest, type Limits } from './httpExchange.js';

export type { HttpBody, HttpRequest } from './httpExchange.js';

/** A JSON request body. */
export function jsonBody(value: unknown): HttpBody {
  const bytes = Buffer.from(JSON.stringify(value), 'utf8');
  return {
    contentType: 'application/json',
    contentLength: bytes.length,
    open: async function* () {
      yield bytes;
    },
  };
}


/** A final answer: its status and its body, parsed as JSON when it is JSON, as text otherwise. */
export interface HttpAnswer {
  readonly status: number;
  readonly body: unknown;
  /** The emulator's mark (`x-svc-emulator`), when the emulator answered. */
  readonly emulated?: string | undefined;
}

function checkLimits(req: HttpRequest): Limits {
  const pick = (name: keyof HttpLimits, min: number): number => {
    const v = req[name] ?? HTTP_DEFAULTS[name];
    if (typeof v !== 'number' || !Number.isFinite(v) || v < min) {
      throw new InputError('invalid_argument', `${name} must be a finite number ≥ ${min}, got ${String(v)}`, { path: name });
    }
    return v;
  };
  return { headersTimeoutMs: pick('headersTimeoutMs', 0), idleTimeoutMs: pick('idleTimeoutMs', 0), maxResponseBytes: pick('maxResponseBytes', 1) };
}

function parseBody(raw: Buffer | undefined): unknown {
  if (raw === undefined || raw.length === 0) return undefined;
  const text = raw.toString('utf8');
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

/**
 * Send one request and resolve with its final answer, whatever its status.
 *
 * - Redirects: one to another origin (scheme, host or port) is refused with `redirect_refused`
 *   before anything is sent there, whatever the method; a same-origin 307/308 is followed with
 *   the same method and body, a same-origin 301/302/303 only for a GET (a POST is refused rather
 *   than resent as a GET); at most 3 are followed.
 * - Limits (HttpLimits): `response_too_large` over `maxResponseBytes`, the socket destroyed at
 *   once; `response_timeout` when the headers do not come within `headersTimeoutMs` of the end
 *   of the request, or no byte moves for `idleTimeoutMs` during the upload or the answer's body.
 * - Rejects with `connection_failed` (no answer), `connection_lost` (the answer broke off) or
 *   `aborted` (the signal). Every error masks `secrets`.
 */
export async function sendHttp(req: HttpRequest): Promise<HttpAnswer> {
  const limits = checkLimits(req);
  const fail = failures(req, limits);
  const origin = req.url.origin;
  let url = req.url;
  for (let redirects = 0; ; redirects++) {
    const hop = req.fetch ? await exchangeFetch(req.fetch, req, url, req.method, limits, fail) : await exchangeNode(req, url, req.method, limits, fail);
    if (!REDIRECTS.has(hop.status)) return { status: hop.status, body: parseBody(hop.body), ...(hop.emulated !== undefined ? { emulated: hop.emulated } : {}) };
    let target: URL;
    try {
      target = new URL(hop.location ?? '', url);
      if (hop.location === undefined || hop.location.length === 0) throw new Error('no Location');
    } catch {
      throw fail.redirect(hop.status, 'without a usable Location');
    }
    if (target.origin !== origin) throw fail.redirect(hop.status, `to another origin (${target.origin})`);
    if (req.method !== 'GET' && hop.status !== 307 && hop.status !== 308) throw fail.redirect(hop.status, 'with a status that would resend the POST as a GET');
    if (redirects >= HTTP_DEFAULTS.maxRedirects) throw fail.redirect(hop.status, `more than ${HTTP_DEFAULTS.maxRedirects} times`);
    url = target;
  }
}

/**
 * `sendHttp`, then the one mapping of an answer to a value or an error: a non-2xx status is
 * the ApiError `errorFromHttp` makes of it; a 2xx body must satisfy `schema` (ContractError
 * `invalid_response` otherwise). `refine` may narrow the code of a refusal its caller knows more about.
 */
export async function requestJson<T>(req: HttpRequest, schema: z.ZodType<T>, refine?: (err: ApiError) => ApiError): Promise<T> {
  const { status, body, emulated } = await sendHttp(req);
  if (status < 200 || status > 299) {
    const err = errorFromHttp(status, body, req.context, req.secrets);
    throw refine ? refine(err) : err;
  }
  const parsed = schema.safeParse(body);
  if (parsed.success) {
    markEmulated(parsed.data, emulated);
    return parsed.data;
  }
  const issue = parsed.error.issues[0];
  const where = issue ? ` at ${issue.path.map(String).join('.') || '(root)'}: ${issue.message}` : '';
  throw new ContractError('invalid_response', `${req.context} answered ${status} with a body the contract does not allow${where}`, { status, detail: body, secrets: req.secrets });
}
