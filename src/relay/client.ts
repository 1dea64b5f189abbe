// The relay's client, for pages (and Node): a session's events read over fetch as server-sent
// events, validated with the schema parser, resumed with Last-Event-ID after a drop. Uses
// only fetch, TextDecoder and AbortController: no Node built-in, so it bundles for browsers.
// This file is the connection (fetch, retry, resume); reading the messages is RelayMessageReader.ts's.
import { Observable, timer, type SchedulerLike } from 'rxjs';
import { RelayError, type SvcError } from '../errors/index.js';
import type { ServerEvent } from '../schema/events.js';
import { RelayListingSchema, type RelayGap, type RelayReset, type RelaySessionInfo } from './protocol.js';
import { relayHeaders, relayHttpError } from './relayHttp.js';
import { endError, RelayMessageReader } from './RelayMessageReader.js';

// What a page needs of the wire beside the client: 'svc-stream/relay' and 'svc-stream/browser' export this module whole.
export {
  RELAY_MESSAGES,
  RELAY_RESET_REASONS,
  parseRelayCursor,
  type RelayStatus,
  type RelayGap,
  type RelayReset,
  type RelayEnd,
  type RelaySessionInfo,
  type RelayCursor,
  type ErrorSummary,
} from './protocol.js';
export type { RelayMessage } from './RelayMessageReader.js';
import type { RelayMessage } from './RelayMessageReader.js';
import { SseParser, type SseMessage } from './sse.js';

/** Options of {@link relayMessages} and {@link relayEvents}. */
export interface RelayClientOptions {
  /** The relay's token, sent as `Authorization: Bearer …`. Omit it to rely on the cookie (`credentials: 'include'`) or a relay without one. */
  readonly token?: string | undefined;
  /** Resume after this position (the `id` of the last message the page had); default none, from the start of what the relay keeps. */
  readonly lastEventId?: string | number | undefined;
  /** fetch's `credentials`: `'include'` sends the relay's cookie cross-origin. Default `'same-origin'`. */
  readonly credentials?: 'omit' | 'same-origin' | 'include' | undefined;
  /** Failed attempts in a row (network errors, 503, a stream cut before `end`) before giving up. Default 10. */
  readonly maxRetries?: number | undefined;
  /** Delay before reconnecting, when the relay has not set one (`retry:`). Default 1000 ms. */
  readonly retryMs?: number | undefined;
  /** Longest line of the stream accepted (one event). Default 1 MiB. */
  readonly maxLineChars?: number | undefined;
  /** The fetch to use (the edge; default `globalThis.fetch`). */
  readonly fetch?: typeof fetch | undefined;
  /** Scheduler of the reconnection delay. Default `asyncScheduler`. */
  readonly scheduler?: SchedulerLike | undefined;
}

/** Options of {@link relayEvents}: those of {@link relayMessages}, and what to do with a gap or a reset. */
export interface RelayEventsOptions extends RelayClientOptions {
  /**
   * Called when entries of the session will never reach this client (a hole in the middle);
   * the stream goes on. Without it a gap errors with `relay_gap`, since a fold that skipped
   * events would be wrong without saying so.
   */
  readonly onGap?: ((gap: RelayGap) => void) | undefined;
  /**
   * Called when the relay could not resume this client where it was: the events that follow
   * start at the oldest one kept, so a fold must start again. Without it a reset errors with
   * `relay_gap`. (To restart a fold on each reset, read {@link relayMessages}.)
   */
  readonly onReset?: ((reset: RelayReset) => void) | undefined;
  /** Called with the session's status (`streaming`, `reconnecting` …) and the connection's (`live`, `reconnecting`). */
  readonly onStatus?: ((status: string) => void) | undefined;
}

/**
 * Every message of one relayed session (`https://relay/sessions/ID/events`), from an
 * in-process relay or a fleet relay (`createRelay({ from })`), validated with the protocol's schemas.
 *
 * - Cold: each subscription opens its own stream, and closes it on unsubscribe.
 * - Emits `connection: open` when a stream opens, then the relay's messages: `status`,
 *   `event` (validated with the schema parser; a frame that breaks the contract, or a position
 *   that goes back, errors with `malformed_frame`), `gap`, `reset`.
 * - When the stream drops before the end, or the relay answers 503 (`relay_busy`, or
 *   `redis_unavailable` from a relay whose Redis is away), emits `connection: reconnecting`
 *   with the typed reason (`error`), waits the relay's `retry:` delay (or the 503's
 *   `Retry-After`, if longer) and resumes with `Last-Event-ID` (on a fleet, any relay of it
 *   will do): no event is received twice or skipped without a `gap` or a `reset`.
 *   `maxRetries` failures in a row error with the last refusal (an `ApiError` with its code,
 *   e.g. `redis_unavailable`), or `connection_failed` (never connected) / `connection_lost`.
 * - Completes on the relay's `end` when the session is done or was closed; errors with a
 *   `SessionError` carrying the session's code when it failed.
 * - A refused request errors as the library's one HTTP error factory says (`ApiError` with the
 *   relay's code): `relay_unauthorized` (401), `relay_origin_refused` (403; in a browser a
 *   refused origin is a CORS failure, seen as `connection_failed`), `not_found`,
 *   `invalid_argument` (400); `invalid_response` (a `RelayError`) when the answer is not an event stream.
 */
export function relayMessages(url: string, options: RelayClientOptions = {}): Observable<RelayMessage> {
  return new Observable<RelayMessage>((subscriber) => {
    const doFetch = options.fetch ?? globalThis.fetch.bind(globalThis);
    const maxRetries = options.maxRetries ?? 10;
    let retryMs = options.retryMs ?? 1000;
    const reader = new RelayMessageReader(options.lastEventId);
    let failures = 0;
    let everOpened = false;
    /** Why the attempt under way failed: a refusal (typed by its code) or the connection. */
    let lastFailure: SvcError | undefined;
    /** A 503's Retry-After, in ms (0: none). */
    let retryAfterMs = 0;
    let stopped = false;
    let controller: AbortController | undefined;
    let wait: { unsubscribe(): void } | undefined;

    const fail = (err: unknown): void => {
      stopped = true;
      subscriber.error(err);
    };

    /** One message: emitted, or the end; false when the stream is over for this subscriber. */
    const handle = (m: SseMessage): boolean => {
      let read: ReturnType<RelayMessageReader['read']>;
      try {
        read = reader.read(m);
      } catch (err) {
        fail(err);
        return false;
      }
      if (read === undefined) return true;
      if (read.type !== 'end') {
        subscriber.next(read);
        return true;
      }
      stopped = true;
      if (read.end.status === 'failed') subscriber.error(endError(read.end));
      else {
        subscriber.next({ type: 'status', status: read.end.status, title: '' });
        subscriber.complete();
      }
      return false;
    };

    const attempt = async (): Promise<void> => {
      controller = new AbortController();
      const headers = relayHeaders('text/event-stream', options.token);
      if (reader.lastId !== '') headers['last-event-id'] = reader.lastId;
      let response: Response;
      try {
        response = await doFetch(url, { headers, credentials: options.credentials ?? 'same-origin', signal: controller.signal });
      } catch (err) {
        // A network failure (or a CORS refusal, which a page cannot tell apart): retried.
        lastFailure = new RelayError(everOpened ? 'connection_lost' : 'connection_failed', 'the relay could not be reached', { cause: err, retryable: true });
        return;
      }
      if (stopped) return;
      if (response.status !== 200) {
        const refusal = relayHttpError(response.status, await response.text().catch(() => ''));
        if (stopped) return;
        // 503 (`relay_busy`, `redis_unavailable`): retried like a dropped stream, after its Retry-After, and said.
        if (response.status !== 503) fail(refusal);
        else {
          lastFailure = refusal;
          retryAfterMs = retryAfter(response.headers.get('retry-after'));
        }
        return;
      }
      if (!/^text\/event-stream/i.test(response.headers.get('content-type') ?? '') || !response.body) {
        fail(new RelayError('invalid_response', 'the relay did not answer with an event stream'));
        return;
      }
      everOpened = true;
      subscriber.next({ type: 'connection', state: 'open' });
      const parser = new SseParser(options.maxLineChars ?? 1 << 20);
      const decoder = new TextDecoder();
      const body = response.body.getReader();
      try {
        for (;;) {
          const { done, value } = await body.read();
          if (done || stopped) break;
          let messages: SseMessage[];
          try {
            messages = parser.push(decoder.decode(value, { stream: true }));
          } catch (err) {
            fail(new RelayError('malformed_frame', (err as Error).message));
            break;
          }
          if (parser.retry !== undefined) retryMs = parser.retry;
          for (const m of messages) {
            failures = 0;
            if (!handle(m)) break;
          }
          if (stopped) break;
        }
      } catch (err) {
        // the stream broke: retried
        lastFailure = new RelayError('connection_lost', 'the stream from the relay broke', { cause: err, retryable: true });
      } finally {
        if (stopped) void body.cancel().catch(() => undefined);
      }
    };

    const loop = async (): Promise<void> => {
      while (!stopped) {
        lastFailure = undefined;
        retryAfterMs = 0;
        await attempt();
        if (stopped) return;
        failures++;
        const error = lastFailure ?? new RelayError('connection_lost', 'the relay ended the stream before the session ended', { retryable: true });
        if (failures > maxRetries) {
          // The last attempt's own error when it was a refusal (`redis_unavailable`, `relay_busy`): typed, not a generic one.
          fail(error instanceof RelayError ? new RelayError(everOpened ? 'connection_lost' : 'connection_failed', `no stream from the relay after ${maxRetries} retries`, { retryable: true, cause: error }) : error);
          return;
        }
        subscriber.next({ type: 'connection', state: 'reconnecting', error });
        await new Promise<void>((resolve) => (wait = timer(Math.max(retryMs, retryAfterMs), options.scheduler).subscribe(() => resolve())));
      }
    };

    void loop().catch((err: unknown) => fail(err));
    return () => {
      stopped = true;
      wait?.unsubscribe();
      controller?.abort();
    };
  });
}

/**
 * The session's events from a relay, ready for `splitSession` or any state operator: the
 * messages of {@link relayMessages} without the bookkeeping. Cold; completes when the session
 * is done; errors as {@link relayMessages} does, and with `relay_gap` on a gap unless `onGap`
 * is given.
 *
 * @example
 * ```ts
 * import { relayEvents, splitSession } from 'svc-stream/browser';
 *
 * const { currentRoles$ } = splitSession(relayEvents('https://relay.example.com/sessions/call-1/events', { token }));
 * currentRoles$.subscribe({ next: (roles) => console.log(roles), error: (err) => console.error(err.code) });
 * ```
 */
export function relayEvents(url: string, options: RelayEventsOptions = {}): Observable<ServerEvent> {
  return new Observable<ServerEvent>((subscriber) =>
    relayMessages(url, options).subscribe({
      next: (m) => {
        if (m.type === 'event') subscriber.next(m.event);
        else if (m.type === 'status') options.onStatus?.(m.status);
        else if (m.type === 'connection') options.onStatus?.(m.state === 'open' ? 'live' : 'reconnecting');
        else if (m.type === 'reset') {
          if (options.onReset) options.onReset(m.reset);
          else subscriber.error(new RelayError('relay_gap', `the relay could not resume this client where it was (${m.reset.reason}); the events that follow start at the oldest one kept`, { detail: m.reset }));
        } else if (options.onGap) options.onGap(m.gap);
        else subscriber.error(new RelayError('relay_gap', `${m.gap.missed} entries of this session will never reach this client`, { detail: m.gap }));
      },
      error: (err: unknown) => subscriber.error(err),
      complete: () => subscriber.complete(),
    }),
  );
}

/**
 * The sessions a relay holds (`GET /sessions`). Rejects with the errors of
 * {@link relayMessages} for a refused request.
 */
export async function listRelaySessions(baseUrl: string, options: Pick<RelayClientOptions, 'token' | 'credentials' | 'fetch'> = {}): Promise<RelaySessionInfo[]> {
  const doFetch = options.fetch ?? globalThis.fetch.bind(globalThis);
  let response: Response;
  try {
    response = await doFetch(new URL('sessions', baseUrl.endsWith('/') ? baseUrl : `${baseUrl}/`).toString(), { headers: relayHeaders('application/json', options.token), credentials: options.credentials ?? 'same-origin' });
  } catch (err) {
    throw new RelayError('connection_failed', 'the relay could not be reached', { cause: err, retryable: true });
  }
  const body = await response.text();
  if (response.status !== 200) throw relayHttpError(response.status, body);
  let listing: unknown;
  try {
    listing = JSON.parse(body);
  } catch {
    throw new RelayError('invalid_response', 'the relay listing is not JSON');
  }
  const parsed = RelayListingSchema.safeParse(listing);
  if (!parsed.success) throw new RelayError('invalid_response', 'the relay listing is not a list of sessions');
  return parsed.data.sessions;
}

/** A Retry-After header (seconds, or an HTTP date) in ms, at most a minute; 0 when there is none. */
function retryAfter(header: string | null): number {
  if (header === null) return 0;
  const seconds = /^\d+$/.test(header.trim()) ? Number(header) : (Date.parse(header) - Date.now()) / 1000;
  return Number.isFinite(seconds) && seconds > 0 ? Math.min(seconds * 1000, 60_000) : 0;
}

/** The event-stream URL of session `id` on the relay at `baseUrl`. */
export function relaySessionUrl(baseUrl: string, id: string): string {
  return new URL(`sessions/${encodeURIComponent(id)}/events`, baseUrl.endsWith('/') ? baseUrl : `${baseUrl}/`).toString();
}
