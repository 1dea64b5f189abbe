// One session's events published to Redis Streams as they pass: the session runs exactly as
// without it, and a relay anywhere in the fleet serves it to pages.
import { Observable } from 'rxjs';
import { callUser } from '../internal/userCallback.js';
import { errorSummary } from '../relay/protocol.js';
import type { ServerEvent } from '../schema/events.js';
import type { SessionState } from '../schema/sessionState.js';
import { startPublisher, type PublishReport, type Publisher, type PublisherOptions, type SessionPublisher } from './publisher.js';

/** What a session may be built with, when `publishSession` is given a function: the hook its life cycle goes to. */
export interface PublishHooks {
  /** Pass as the session's `onStateChange`: `connecting`, `streaming`, `reconnecting`, `finishing` become entries. */
  readonly onStateChange: (oldState: SessionState, newState: SessionState) => void;
}

/** Options of {@link publishSession}: the session's id, and where to publish (a `publisher`, or a `url` with the publisher's options). */
export interface PublishSessionOptions extends PublisherOptions {
  /** The session's id in the fleet (1 to 128 of `A-Z a-z 0-9 . _ ~ -`): the relays' `/sessions/ID/events`. */
  readonly id: string;
  /** Shown by pages (a file name, a call id). Default the id. */
  readonly title?: string | undefined;
  /** A publisher to share (one connection for every session of a process; not closed here). Without it, one is opened from `url` for this session and closed after its end. */
  readonly publisher?: Publisher | undefined;
  /** Called once, when every entry of the run was stored or given up: what was published and what was not, and why. */
  readonly onReport?: ((report: PublishReport) => void) | undefined;
}

/**
 * The session's events, unchanged, while each is published to Redis Streams under `id`.
 *
 * - Cold: each subscription is one run of the session, published as a new stream of `id`
 *   (replacing the run Redis held). Emits each event as `events$` does, synchronously:
 *   publishing is queued and never delays, fails or ends the session.
 * - Publishes a `start`, each event, the statuses (give the session the hook: pass a function
 *   `({ onStateChange }) => session$`), and the end: `done` on completion, `failed` (code and
 *   first line) on error, `closed` on unsubscribe.
 * - When Redis is away, entries wait (bounded) and are written when it is back; what never
 *   could be is counted in the report (`onReport`) and the publisher's `stats.unpublished`.
 *
 * ## Example
 * ```ts
 * import { conversationSession, fileSource } from 'svc-stream';
 * import { publishSession } from 'svc-stream/fleet';
 *
 * publishSession(({ onStateChange }) => conversationSession(fileSource('call.wav'), { onStateChange }), {
 *   url: 'redis://10.0.0.5:6379',
 *   id: 'call-17',
 *   onReport: (r) => r.unpublished > 0 && console.warn(`${r.unpublished} entries not published: ${r.error?.message}`),
 * }).subscribe();
 * ```
 */
export function publishSession(
  events$: Observable<ServerEvent> | ((hooks: PublishHooks) => Observable<ServerEvent>),
  options: PublishSessionOptions,
): Observable<ServerEvent> {
  return new Observable<ServerEvent>((subscriber) => {
    const own = options.publisher === undefined;
    let publisher: Publisher;
    let session: SessionPublisher;
    try {
      publisher = options.publisher ?? startPublisher(options);
      session = publisher.session(options.id, { title: options.title });
    } catch (err) {
      subscriber.error(err);
      return;
    }
    void session.settled.then((report) => callUser(options.onReport, report));
    // Its own publisher closes with the session: what Redis has not stored within
    // `closeTimeoutMs` of the end is counted unpublished, and the report comes.
    const ended = (): void => {
      if (own) void publisher.close();
    };
    const source$ = typeof events$ === 'function' ? events$({ onStateChange: session.onStateChange }) : events$;
    const sub = source$.subscribe({
      next: (event) => {
        session.event(event);
        subscriber.next(event);
      },
      error: (err: unknown) => {
        session.end({ status: 'failed', error: errorSummary(err) });
        ended();
        subscriber.error(err);
      },
      complete: () => {
        session.end({ status: 'done' });
        ended();
        subscriber.complete();
      },
    });
    return () => {
      sub.unsubscribe();
      session.end({ status: 'closed' });
      ended();
    };
  });
}

