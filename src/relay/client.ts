// The relay's client, for pages (and Node): a session's events read over fetch as server-sent
// events, validated with the schema parser, resumed with Last-Event-ID after a drop. Uses
// only fetch, TextDecoder and AbortController: no Node built-in, so it bundles for browsers.
import { Observable, timer, type SchedulerLike } from 'rxjs';
import { ERROR_CODES, errorFromHttp, RelayError, SessionError, type ErrorCode, type SvcError } from '../errors.js';
import type { ServerEvent } from '../schema/events.js';
import { parseServerEventValue } from '../schema/parseServerEvent.js';
import {
  parseRelayCursor,
  RelayEndSchema,
  RelayGapSchema,
  RelayListingSchema,
  RelayResetSchema,
  RelayStatusSchema,
  type RelayEnd,
  type RelayGap,
  type RelayReset,
  type RelaySessionInfo,
} from './protocol.js';

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

/**
 * One message from the relay: an event with its id (the position to resume from), the
 * session's status, a gap, a reset (start the fold again: what follows is the oldest kept),
 * or the connection's state (`open`, `reconnecting`).
 */
export type RelayMessage =
  | { readonly type: 'event'; readonly id: string; readonly event: ServerEvent }
  | { readonly type: 'status'; readonly status: string; readonly title: string }
  | { readonly type: 'gap'; readonly gap: RelayGap }
  | { readonly type: 'reset'; readonly reset: RelayReset }
  | { readonly type: 'connection'; readonly state: 'open' | 'reconnecting' };

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

const KNOWN_CODES: ReadonlySet<string> = new Set(ERROR_CODES);

/** A refusal by the relay, through the library's one HTTP error factory; undefined for 503 (busy: retried). */
function httpError(status: number, body: string): SvcError | undefined {
  if (status === 503) return undefined;
  let parsed: unknown = body;
  try {
    parsed = JSON.parse(body);
  } catch {
    // not the relay's JSON; the status says enough
  }
  return errorFromHttp(status, parsed, 'the relay');
}

function endError(end: RelayEnd): SessionError {
  const code = end.error?.code ?? 'internal_error';
  const message = end.error?.message ?? 'the session failed';
  return KNOWN_CODES.has(code) ? new SessionError(code as ErrorCode, message) : new SessionError('internal_error', `${code}: ${message}`);
}

/**
 * Every message of one relayed session (`https://relay/sessions/ID/events`), from an
 * in-process relay or a fleet relay (`createRelay({ from })`), validated with the protocol's schemas.
 *
 * - Cold: each subscription opens its own stream, and closes it on unsubscribe.
 * - Emits `connection: open` when a stream opens, then the relay's messages: `status`,
 *   `event` (validated with the schema parser; a frame that breaks the contract, or a position
 *   that goes back, errors with `malformed_frame`), `gap`, `reset`.
 * - When the stream drops before the end, emits `connection: reconnecting`, waits the relay's
 *   `retry:` delay and resumes with `Last-Event-ID` (on a fleet, any relay of it will do): no
 *   event is received twice or skipped without a `gap` or a `reset`. `maxRetries` failures in
 *   a row error with `connection_failed` (never connected) or `connection_lost`.
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
    let lastId = options.lastEventId === undefined || options.lastEventId === 0 ? '' : String(options.lastEventId);
    let position = lastId === '' ? undefined : parseRelayCursor(lastId);
    let afterReset = false;
    let failures = 0;
    let everOpened = false;
    let stopped = false;
    let controller: AbortController | undefined;
    let wait: { unsubscribe(): void } | undefined;

    const fail = (err: unknown): void => {
      stopped = true;
      subscriber.error(err);
    };
    const malformed = (what: string): false => {
      fail(new RelayError('malformed_frame', `the relay sent ${what}`));
      return false;
    };

    /** Take a message's id as the new position: it must move forward, within an epoch, unless a reset came first. */
    const advance = (id: string | undefined): boolean => {
      if (id === undefined) return true;
      const c = parseRelayCursor(id);
      if (!c) return malformed(`an id that is no position: ${id.slice(0, 40)}`);
      if (position && !afterReset && (c.epoch !== position.epoch || c.seq <= position.seq)) return malformed(`id ${id.slice(0, 40)} after ${lastId.slice(0, 40)}`);
      afterReset = false;
      position = c;
      lastId = id;
      return true;
    };

    const handle = (m: SseMessage): boolean => {
      let data: unknown;
      try {
        data = JSON.parse(m.data);
      } catch {
        return malformed(`a ${m.event} message that is not JSON`);
      }
      switch (m.event) {
        case 'event': {
          const parsed = parseServerEventValue(data);
          if (!parsed.ok) return malformed(`an event the contract refuses: ${parsed.reason}`);
          if (m.id === undefined) return malformed('an event without an id');
          if (!advance(m.id)) return false;
          subscriber.next({ type: 'event', id: m.id, event: parsed.event });
          return true;
        }
        case 'status': {
          const s = RelayStatusSchema.safeParse(data);
          if (!s.success) return malformed('a status message without a status');
          if (!advance(m.id)) return false;
          subscriber.next({ type: 'status', status: s.data.status, title: s.data.title ?? '' });
          return true;
        }
        case 'gap': {
          const g = RelayGapSchema.safeParse(data);
          if (!g.success) return malformed('a gap message the protocol refuses');
          // An in-process relay's gap skips numbered events: resume past them if the stream drops now.
          const next = parseRelayCursor(g.data.next);
          if (next && next.epoch === '' && next.seq - 1 > (position?.seq ?? 0)) {
            position = { epoch: '', seq: next.seq - 1 };
            lastId = String(next.seq - 1);
          }
          subscriber.next({ type: 'gap', gap: g.data });
          return true;
        }
        case 'reset': {
          const r = RelayResetSchema.safeParse(data);
          if (!r.success) return malformed('a reset message the protocol refuses');
          afterReset = true;
          subscriber.next({ type: 'reset', reset: r.data });
          return true;
        }
        case 'end': {
          const e = RelayEndSchema.safeParse(data);
          if (!e.success) return malformed('an end message the protocol refuses');
          stopped = true;
          if (e.data.status === 'failed') subscriber.error(endError(e.data));
          else {
            subscriber.next({ type: 'status', status: e.data.status, title: '' });
            subscriber.complete();
          }
          return false;
        }
        default:
          return true; // a message this client does not know: newer relays may add some
      }
    };

    const attempt = async (): Promise<void> => {
      controller = new AbortController();
      const headers: Record<string, string> = { accept: 'text/event-stream' };
      if (options.token !== undefined) headers['authorization'] = `Bearer ${options.token}`;
      if (lastId !== '') headers['last-event-id'] = lastId;
      let response: Response;
      try {
        response = await doFetch(url, { headers, credentials: options.credentials ?? 'same-origin', signal: controller.signal });
      } catch {
        return; // network failure (or a CORS refusal, which a page cannot tell apart): retried
      }
      if (stopped) return;
      if (response.status !== 200) {
        const body = await response.text().catch(() => '');
        const err = httpError(response.status, body);
        if (err) fail(err);
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
      const reader = response.body.getReader();
      try {
        for (;;) {
          const { done, value } = await reader.read();
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
      } catch {
        // the stream broke: retried
      } finally {
        if (stopped) void reader.cancel().catch(() => undefined);
      }
    };

    const loop = async (): Promise<void> => {
      while (!stopped) {
        await attempt();
        if (stopped) return;
        failures++;
        if (failures > maxRetries) {
          fail(new RelayError(everOpened ? 'connection_lost' : 'connection_failed', `no stream from the relay after ${maxRetries} retries`, { retryable: true }));
          return;
        }
        subscriber.next({ type: 'connection', state: 'reconnecting' });
        await new Promise<void>((resolve) => (wait = timer(retryMs, options.scheduler).subscribe(() => resolve())));
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
  const headers: Record<string, string> = { accept: 'application/json' };
  if (options.token !== undefined) headers['authorization'] = `Bearer ${options.token}`;
  let response: Response;
  try {
    response = await doFetch(new URL('sessions', baseUrl.endsWith('/') ? baseUrl : `${baseUrl}/`).toString(), { headers, credentials: options.credentials ?? 'same-origin' });
  } catch (err) {
    throw new RelayError('connection_failed', 'the relay could not be reached', { cause: err, retryable: true });
  }
  const body = await response.text();
  if (response.status !== 200) {
    let parsed: unknown = body;
    try {
      parsed = JSON.parse(body);
    } catch {
      // the status says enough
    }
    throw errorFromHttp(response.status, parsed, 'the relay');
  }
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

/** The event-stream URL of session `id` on the relay at `baseUrl`. */
export function relaySessionUrl(baseUrl: string, id: string): string {
  return new URL(`sessions/${encodeURIComponent(id)}/events`, baseUrl.endsWith('/') ? baseUrl : `${baseUrl}/`).toString();
}
