// A session's events tied to one run of its publishing: the run starts at subscription, each
// event is appended as it passes (unchanged), and the run ends with the stream: done, failed
// (with the error's summary) or closed by an unsubscribe. Any `Publisher`'s `publish` is this.
import { Observable } from 'rxjs';
import { callUser } from '../internal/userCallback.js';
import type { PublishOptions, Publisher, SessionPublisher } from '../publishing.js';
import type { ServerEvent } from '../schema/events.js';
import { errorSummary } from '../schema/relay.js';

/** `events$`, unchanged, each event published under `options.id` by `publisher` (cold: each subscription is one run). */
export function publishEvents(publisher: Pick<Publisher, 'session'>, events$: Observable<ServerEvent>, options: PublishOptions): Observable<ServerEvent> {
  return new Observable<ServerEvent>((subscriber) => {
    let session: SessionPublisher;
    try {
      session = publisher.session(options.id, { title: options.title });
    } catch (err) {
      subscriber.error(err);
      return;
    }
    if (options.onReport) void session.settled.then((report) => callUser(options.onReport, report));
    if (options.state$) session.follow(options.state$);
    const sub = events$.subscribe({
      next: (event) => {
        session.event(event);
        subscriber.next(event);
      },
      error: (err: unknown) => {
        session.end({ status: 'failed', error: errorSummary(err) });
        subscriber.error(err);
      },
      complete: () => {
        session.end({ status: 'done' });
        subscriber.complete();
      },
    });
    return () => {
      sub.unsubscribe();
      session.end({ status: 'closed' });
    };
  });
}
