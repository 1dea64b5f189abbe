// The relay's client, for pages (and Node): a session's events read over fetch as server-sent
// events, validated with the schema parser, resumed with Last-Event-ID after a drop. Uses
// only fetch, TextDecoder and AbortController: no Node built-in, so it bundles for browsers.
import { Observable, timer, type SchedulerLike } from 'rxjs';
import { ERROR_CODES, RelayError, SessionError, type ErrorCode } from '../errors.js';
import type { ServerEvent } from '../schema/events.js';
import { parseServerEventValue } from '../schema/parseServerEvent.js';
import type { RelayEnd, RelayGap, RelaySessionInfo } from './protocol.js';

// What a page needs of the wire beside the client: 'svc-stream/relay' and 'svc-stream/browser' export this module whole.
export { RELAY_MESSAGES, type RelayStatus, type RelayGap, type RelayEnd, type RelaySessionInfo } from './protocol.js';
import { SseParser, type SseMessage } from './sse.js';

/** Options of {@link relayMessages} and {@link relayEvents}. */
export interface RelayClientOptions {
  /** The relay's token, sent as `Authorization: Bearer …`. Omit it to rely on the cookie (`credentials: 'include'`) or a relay without one. */
  readonly token?: string | undefined;
  /** Resume after this event id (what the page had); default 0, from the start of the relay's history. */
  readonly lastEventId?: number | undefined;
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

/** One message from the relay: an event with its id, the session's status, a gap in the history, or the connection's state (`open`, `reconnecting`). */
export type RelayMessage =
  | { readonly type: 'event'; readonly id: number; readonly event: ServerEvent }
  | { readonly type: 'status'; readonly status: string; readonly title: string }
  | { readonly type: 'gap'; readonly gap: RelayGap }
  | { readonly type: 'connection'; readonly state: 'open' | 'reconnecting' };

/** Options of {@link relayEvents}: those of {@link relayMessages}, and what to do with a gap. */
export interface RelayEventsOptions extends RelayClientOptions {
  /**
   * Called when events were trimmed from the relay's history before this client got them;
   * the stream goes on from the next event. Without it a gap errors with `relay_gap`, since a
   * fold that skipped events would be wrong without saying so.
   */
  readonly onGap?: ((gap: RelayGap) => void) | undefined;
  /** Called with the session's status (`streaming`, `reconnecting` …) and the connection's (`open`, `reconnecting`). */
  readonly onStatus?: ((status: string) => void) | undefined;
}

const KNOWN_CODES: ReadonlySet<string> = new Set(ERROR_CODES);

function httpError(status: number, body: string): RelayError | undefined {
  let message = `the relay answered ${status}`;
  try {
    const parsed = JSON.parse(body) as { message?: unknown };
    if (typeof parsed.message === 'string') message = `${message}: ${parsed.message.slice(0, 200)}`;
  } catch {
    // not the relay's JSON; the status says enough
  }
  switch (status) {
    case 401:
      return new RelayError('relay_unauthorized', message, { status, retryable: false });
    case 403:
      return new RelayError('relay_origin_refused', message, { status, retryable: false });
    case 404:
      return new RelayError('not_found', message, { status, retryable: false });
    case 400:
      return new RelayError('invalid_argument', message, { status, retryable: false });
    case 503:
      return undefined; // busy: retried
    default:
      return new RelayError('http_error', message, { status, retryable: false });
  }
}

function endError(end: RelayEnd): SessionError {
  const code = end.error?.code ?? 'internal_error';
  const message = end.error?.message ?? 'the session failed';
  return KNOWN_CODES.has(code) ? new SessionError(code as ErrorCode, message) : new SessionError('internal_error', `${code}: ${message}`);
}

/**
 * Every message of one relayed session (`https://relay/sessions/ID/events`).
 *
 * - Cold: each subscription opens its own stream, and closes it on unsubscribe.
 * - Emits `connection: open` when a stream opens, then the relay's messages: `status`,
 *   `event` (validated with the schema parser; a frame that breaks the contract errors with
 *   `malformed_frame`), `gap`.
 * - When the stream drops before the end, emits `connection: reconnecting`, waits the relay's
 *   `retry:` delay and resumes with `Last-Event-ID`: no event is received twice or skipped
 *   without a `gap`. `maxRetries` failures in a row error with `connection_failed` (never
 *   connected) or `connection_lost`.
 * - Completes on the relay's `end` when the session is done or was closed; errors with a
 *   `SessionError` carrying the session's code when it failed.
 * - Errors with a `RelayError`: `relay_unauthorized` (401), `relay_origin_refused` (403; in a
 *   browser a refused origin is a CORS failure, seen as `connection_failed`), `not_found`,
 *   `invalid_argument` (400), `http_error`, `invalid_response` (not an event stream).
 */
export function relayMessages(url: string, options: RelayClientOptions = {}): Observable<RelayMessage> {
  return new Observable<RelayMessage>((subscriber) => {
    const doFetch = options.fetch ?? globalThis.fetch.bind(globalThis);
    const maxRetries = options.maxRetries ?? 10;
    let retryMs = options.retryMs ?? 1000;
    let lastId = options.lastEventId ?? 0;
    let failures = 0;
    let everOpened = false;
    let stopped = false;
    let controller: AbortController | undefined;
    let wait: { unsubscribe(): void } | undefined;

    const fail = (err: unknown): void => {
      stopped = true;
      subscriber.error(err);
    };

    const handle = (m: SseMessage): boolean => {
      let data: unknown;
      try {
        data = JSON.parse(m.data);
      } catch {
        fail(new RelayError('malformed_frame', `the relay sent a ${m.event} message that is not JSON`));
        return false;
      }
      switch (m.event) {
        case 'event': {
          const id = Number(m.id);
          const parsed = parseServerEventValue(data);
          if (!Number.isSafeInteger(id) || id <= lastId || !parsed.ok) {
            fail(new RelayError('malformed_frame', parsed.ok ? `the relay sent event id ${String(m.id).slice(0, 20)} after ${lastId}` : `the relay sent an event the contract refuses: ${parsed.reason}`));
            return false;
          }
          lastId = id;
          subscriber.next({ type: 'event', id, event: parsed.event });
          return true;
        }
        case 'status': {
          const s = data as { status?: unknown; title?: unknown };
          subscriber.next({ type: 'status', status: String(s.status), title: typeof s.title === 'string' ? s.title : '' });
          return true;
        }
        case 'gap': {
          const g = data as RelayGap;
          lastId = Math.max(lastId, Number(g.next) - 1);
          subscriber.next({ type: 'gap', gap: { after: Number(g.after), next: Number(g.next), missed: Number(g.missed) } });
          return true;
        }
        case 'end': {
          const end = data as RelayEnd;
          stopped = true;
          if (end.status === 'failed') subscriber.error(endError(end));
          else {
            subscriber.next({ type: 'status', status: end.status, title: '' });
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
      if (lastId > 0) headers['last-event-id'] = String(lastId);
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
        else if (options.onGap) options.onGap(m.gap);
        else subscriber.error(new RelayError('relay_gap', `${m.gap.missed} events were trimmed from the relay's history before this client got them`));
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
  if (response.status !== 200) throw httpError(response.status, body) ?? new RelayError('relay_busy', 'the relay is busy', { status: 503, retryable: true });
  const parsed = JSON.parse(body) as { sessions?: unknown };
  if (!Array.isArray(parsed.sessions)) throw new RelayError('invalid_response', 'the relay listing has no sessions array');
  return parsed.sessions as RelaySessionInfo[];
}

/** The event-stream URL of session `id` on the relay at `baseUrl`. */
export function relaySessionUrl(baseUrl: string, id: string): string {
  return new URL(`sessions/${encodeURIComponent(id)}/events`, baseUrl.endsWith('/') ? baseUrl : `${baseUrl}/`).toString();
}
