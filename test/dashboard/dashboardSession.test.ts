// The dashboard's Node-side session: lazy until started, the status it is told, the view
// versioned and cached, the end (done, error, stopped).
import { Observable, Subject } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { SvcError, type ServerEvent } from 'svc-stream';
import { dashboardSession } from '../../src/dashboard/dashboardSession.js';

function source() {
  const subject = new Subject<ServerEvent>();
  const counts = { subscribed: 0, unsubscribed: 0 };
  const events$ = new Observable<ServerEvent>((s) => {
    counts.subscribed++;
    const sub = subject.subscribe(s);
    return () => {
      counts.unsubscribed++;
      sub.unsubscribe();
    };
  });
  return { subject, counts, events$ };
}

const clip: ServerEvent = { type: 'clip', clip: { clip_uuid: 'c1', speaker_label: '1', text: 'Hello.' } };

describe('dashboardSession', () => {
  it('does nothing until start(), then subscribes once however often started', () => {
    const src = source();
    const session = dashboardSession({ events$: src.events$, title: 'call.wav' });
    expect(session.view()).toMatchObject({ type: 'state', version: 0, started: false, status: 'connecting', title: 'call.wav', transcript: [] });
    expect(src.counts.subscribed).toBe(0);
    session.start();
    session.start();
    expect(src.counts.subscribed).toBe(1);
    expect(session.view()).toMatchObject({ version: 1, started: true });
    session.stop();
  });

  it('shows the status it is told (from onStateChange: paused, closing, reconnecting too), and done only once the events complete', async () => {
    const src = source();
    const session = dashboardSession({ events$: src.events$ });
    const changes: string[] = [];
    let completed = false;
    session.changes$.subscribe({ next: () => changes.push(session.view().status), complete: () => (completed = true) });
    session.start();
    expect(changes).toEqual(['connecting']);
    session.setStatus('streaming');
    session.setStatus('streaming'); // no change, no message
    expect(changes).toEqual(['connecting', 'streaming']);
    src.subject.next(clip);
    expect(changes).toHaveLength(3);
    session.setStatus('paused');
    expect(session.view().status).toBe('paused');
    session.setStatus('reconnecting');
    expect(session.view().status).toBe('reconnecting');
    session.setStatus('finishing');
    session.setStatus('closing');
    expect(session.view().status).toBe('closing');
    // A terminal status from onStateChange waits for the events to end, which carry the failure.
    session.setStatus('failed');
    expect(session.view().status).toBe('closing');
    src.subject.next({ type: 'done', duration_ms: 1000 });
    src.subject.complete();
    session.setStatus('streaming'); // ignored once ended
    expect(completed).toBe(true);
    expect(changes.slice(-1)).toEqual(['done']);
    const final = await session.ended;
    expect(final).toMatchObject({ status: 'done', error: null, duration_ms: 1000, clips: [{ clip_uuid: 'c1' }] });
    expect(session.view()).toBe(final); // cached: same version, same object
  });

  it('without counters: connecting until the first event, then streaming', () => {
    const src = source();
    const session = dashboardSession({ events$: src.events$ });
    session.start();
    expect(session.view().status).toBe('connecting');
    src.subject.next({ type: 'topics', topics: ['Refund'] });
    expect(session.view()).toMatchObject({ status: 'streaming', topics: ['Refund'], events_received: 1 });
    session.stop();
  });

  it('ends failed with the error code and first line, and keeps the state so far', async () => {
    const src = source();
    const session = dashboardSession({ events$: src.events$ });
    session.start();
    src.subject.next(clip);
    src.subject.error(new SvcError('unexpected_close', 'the socket closed before done (1011)\nmore detail'));
    expect(await session.ended).toMatchObject({ status: 'failed', error: { code: 'unexpected_close', message: 'the socket closed before done (1011)' }, clips: [{ clip_uuid: 'c1' }] });
  });

  it('stop() unsubscribes from a running session: status closed', async () => {
    const src = source();
    const session = dashboardSession({ events$: src.events$ });
    session.start();
    session.stop();
    expect(src.counts).toEqual({ subscribed: 1, unsubscribed: 1 });
    expect((await session.ended).status).toBe('closed');
  });

  it('a synchronous source ends inside start()', async () => {
    const events$ = new Observable<ServerEvent>((s) => {
      s.next(clip);
      s.next({ type: 'done', duration_ms: 500 });
      s.complete();
    });
    const session = dashboardSession({ events$ });
    session.start();
    expect(await session.ended).toMatchObject({ status: 'done', duration_ms: 500, events_received: 2 });
  });
});
