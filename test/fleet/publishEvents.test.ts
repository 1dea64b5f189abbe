// One run of publishing tied to an event stream, without Redis: events pass unchanged and are
// appended, and the run ends as the stream does (done, failed with a summary, closed).
import { Subject } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { InputError, SvcError } from '../../src/errors/index.js';
import { publishEvents } from '../../src/fleet/publishEvents.js';
import type { PublishReport, SessionPublisher } from '../../src/publishing.js';
import type { ServerEvent } from '../../src/schema/events.js';

function recorder() {
  const log: string[] = [];
  const publisher = {
    session: (id: string, o?: { readonly title?: string | undefined }): SessionPublisher => {
      if (id === 'taken') throw new InputError('invalid_argument', 'taken');
      log.push(`start ${id} ${o?.title}`);
      return {
        id,
        event: (e: ServerEvent) => void log.push(`event ${e.type}`),
        status: () => undefined,
        label: () => undefined,
        follow: () => void log.push('follow'),
        end: (end) => void log.push(`end ${end.status}${end.error ? ` ${end.error.code}` : ''}`),
        stats: {} as never,
        settled: Promise.resolve({ id } as PublishReport),
      };
    },
  };
  return { log, publisher };
}
const clip = { type: 'clip', clip: { clip_uuid: 'c', speaker_label: '1', text: 't', start_ms: 0, duration_ms: 1 } } as ServerEvent;

describe('publishEvents', () => {
  it('events pass unchanged and are published; the run ends done, failed or closed with the stream', async () => {
    for (const [how, last] of [['complete', 'end done'], ['error', 'end failed rate_limited'], ['unsubscribe', 'end closed']] as const) {
      const { log, publisher } = recorder();
      const events$ = new Subject<ServerEvent>();
      const seen: string[] = [];
      let report: PublishReport | undefined;
      const sub = publishEvents(publisher, events$, { id: 'a', title: 'A', state$: new Subject(), onReport: (r) => (report = r) }).subscribe({ next: (e) => seen.push(e.type), error: () => undefined });
      events$.next(clip);
      if (how === 'complete') events$.complete();
      else if (how === 'error') events$.error(new SvcError('rate_limited', 'slow'));
      else sub.unsubscribe();
      expect(seen).toEqual(['clip']);
      // The teardown's end(closed) follows a done or failed end: a session publisher keeps the first.
      expect(log.slice(0, 4)).toEqual(['start a A', 'follow', 'event clip', last]);
      await Promise.resolve();
      expect(report).toEqual({ id: 'a' });
    }
  });

  it('a session the publisher refuses is the stream\'s error', () => {
    const { publisher } = recorder();
    let error: unknown;
    publishEvents(publisher, new Subject<ServerEvent>(), { id: 'taken' }).subscribe({ error: (e) => (error = e) });
    expect(error).toMatchObject({ code: 'invalid_argument' });
  });
});
