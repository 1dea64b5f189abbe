// One session's events published to Redis Streams as they pass: the session runs exactly as
// without it, and a relay anywhere in the fleet serves it to pages.
import { finalize, Observable } from 'rxjs';
import type { ServerEvent } from '../schema/events.js';
import type { PublishOptions, Publisher } from '../publishing.js';
import { startPublisher, type PublisherOptions } from './publisher.js';

/** Options of {@link publishSession}: the session's id, and where to publish (a `publisher`, or a `url` with the publisher's options). */
export interface PublishSessionOptions extends PublisherOptions, PublishOptions {
  /** A publisher to share (one connection for every session of a process; not closed here). Without it, one is opened from `url` for this session and closed after its end. */
  readonly publisher?: Publisher | undefined;
}

/**
 * The session's events, unchanged, while each is published to Redis Streams under `id`.
 *
 * - Cold: each subscription is one run of the session, published as a new stream of `id`
 *   (replacing the run Redis held). Emits each event as `events$` does, synchronously:
 *   publishing is queued and never delays, fails or ends the session.
 * - Publishes a `start`, each event, the statuses (`state$`: the session's `stats.state$`), and
 *   the end: `done` on completion, `failed` (code and first line) on error, `closed` on unsubscribe.
 * - When Redis is away, entries wait (bounded) and are written when it is back; what never
 *   could be is counted in the report (`onReport`: `notPublished`, `unconfirmed`) and the
 *   publisher's `stats`.
 *
 * ## Example
 * ```ts
 * import { analyzeConversation, createSessionStats, fileSource } from 'svc-stream';
 * import { publishSession } from 'svc-stream/fleet';
 *
 * const stats = createSessionStats();
 * publishSession(fileSource('call.wav').pipe(analyzeConversation({ stats })), {
 *   url: 'redis://10.0.0.5:6379',
 *   id: 'call-17',
 *   state$: stats.state$,
 *   onReport: (r) => r.published < r.entries && console.warn(`${r.notPublished} entries not published, ${r.unconfirmed} unconfirmed: ${r.error?.message}`),
 * }).subscribe();
 * ```
 */
export function publishSession(events$: Observable<ServerEvent>, options: PublishSessionOptions): Observable<ServerEvent> {
  return new Observable<ServerEvent>((subscriber) => {
    let publisher: Publisher;
    try {
      publisher = options.publisher ?? startPublisher(options);
    } catch (err) {
      subscriber.error(err);
      return;
    }
    // Its own publisher closes with the session: what Redis has not stored within
    // `closeTimeoutMs` of the end is counted (unconfirmed or not published), and the report comes.
    const own = options.publisher === undefined;
    return publisher
      .publish(events$, options)
      .pipe(finalize(() => own && void publisher.close()))
      .subscribe(subscriber);
  });
}
