// The dashboard server over real sockets: the session's raw events relayed to pages (ids,
// the whole history to a late page, status, end), one session whatever the pages do, and
// what it serves.
import { readFileSync } from 'node:fs';
import { request } from 'node:http';
import { Observable, Subject } from 'rxjs';
import { afterEach, describe, expect, it } from 'vitest';
import { SvcError, type ServerEvent } from 'svc-stream';
import { PAGE_CSS, PAGE_HTML } from '../../src/dashboard/page.js';
import { pageScript } from '../../src/dashboard/pageBundle.js';
import type { SessionState } from '../../src/schema/sessionState.js';
import { startDashboard, type RunningDashboard } from '../../src/dashboard/server.js';
import { createSessionStats, stateStoreOf } from '../../src/session/stats.js';
import { connectSse, type SseConnection, type SseMessage } from './sseClient.js';

/** A session source the test drives by hand, counting its subscriptions. */
function manualSource() {
  const subject = new Subject<ServerEvent>();
  const counts = { subscribed: 0, unsubscribed: 0 };
  const events$ = new Observable<ServerEvent>((subscriber) => {
    counts.subscribed++;
    const sub = subject.subscribe(subscriber);
    return () => {
      counts.unsubscribed++;
      sub.unsubscribe();
    };
  });
  return { subject, counts, events$ };
}

const clip = (id: string, speaker: string, text: string, start: number): ServerEvent => ({
  type: 'clip',
  clip: { clip_uuid: id, speaker_label: speaker, text, start_ms: start, duration_ms: 900 },
});
const partial = (id: string, speaker: string, text: string): ServerEvent => ({
  type: 'partial_clip',
  partial_clip: { clip_uuid: id, speaker_label: speaker, text, end_ms: 500 },
});


let dashboard: RunningDashboard | undefined;
const open: SseConnection[] = [];
afterEach(async () => {
  for (const c of open.splice(0)) c.close();
  await dashboard?.close();
  dashboard = undefined;
});

async function connect(url: string): Promise<SseConnection> {
  const c = await connectSse(url);
  open.push(c);
  return c;
}

function getRaw(url: string, headers: Record<string, string> = {}): Promise<{ status: number; headers: Record<string, unknown>; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { headers }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

const EVENTS = 'sessions/session/events';
const eventsOf = (messages: readonly SseMessage[]) => messages.filter((m) => m.event === 'event').map((m) => m.data as ServerEvent);

describe('the event stream (the relay)', () => {
  it('starts the session on the first page load, relays raw events with ids, gives a late page the whole history, then the end', async () => {
    const src = manualSource();
    const stats = createSessionStats();
    dashboard = await startDashboard({ events$: src.events$, stats, title: 'call.wav' });
    const events = `${dashboard.url}${EVENTS}`;

    // Nothing runs until a page connects.
    const before = JSON.parse((await getRaw(`${dashboard.url}state`)).body);
    expect(before).toMatchObject({ type: 'state', started: false, status: 'connecting', transcript: [] });
    expect(src.counts.subscribed).toBe(0);

    const first = await connect(events);
    await first.waitFor((m) => m.some((x) => x.event === 'status'));
    expect(first.messages[0]).toMatchObject({ event: 'status', data: { status: 'connecting', title: 'call.wav' } });
    expect(src.counts.subscribed).toBe(1);

    const sent: ServerEvent[] = [
      partial('c1', '1', 'Hello th'),
      clip('c1', '1', 'Hello there.', 0),
      { type: 'participant_role', pick: { speaker_label: '1', name: 'Agent' } },
      partial('c2', '2', 'I was char'),
      { type: 'topics', topics: ['Refund'] },
    ];
    for (const e of sent) src.subject.next(e);
    await first.waitFor((m) => eventsOf(m).length === 5);
    expect(eventsOf(first.messages)).toEqual(sent);
    expect(first.messages.filter((m) => m.event === 'event').map((m) => m.id)).toEqual(['1', '2', '3', '4', '5']);

    // A page that connects now (a reload) gets every event so far, and folds the same state.
    const late = await connect(events);
    await late.waitFor((m) => eventsOf(m).length === 5);
    expect(eventsOf(late.messages)).toEqual(sent);
    // The Node side folds the same events, for /state.
    expect(JSON.parse((await getRaw(`${dashboard.url}state`)).body)).toMatchObject({
      status: 'streaming',
      roles: { '1': { name: 'Agent' } },
      topics: ['Refund'],
      transcript: [
        { status: 'final', clip: { clip_uuid: 'c1', text: 'Hello there.' } },
        { status: 'partial', clip: { clip_uuid: 'c2', text: 'I was char' } },
      ],
    });

    // Pages come and go; the session is never restarted or stopped by them.
    first.close();
    await first.closed;
    expect(src.counts).toEqual({ subscribed: 1, unsubscribed: 0 });

    src.subject.next(clip('c2', '2', 'I was charged twice.', 1200));
    src.subject.next({ type: 'done', duration_ms: 4000 });
    src.subject.complete();
    await late.closed;
    expect(late.messages.at(-1)).toMatchObject({ event: 'end', data: { status: 'done' } });
    expect(eventsOf(late.messages)).toHaveLength(7);
    const served = await dashboard.finalServed;
    expect(served).toMatchObject({ status: 'done', duration_ms: 4000 });

    // After the end, a page still gets the whole session, then end, and the stream closes.
    const after = await connect(events);
    await after.closed;
    expect(eventsOf(after.messages)).toHaveLength(7);
    expect(after.messages.at(-1)!.event).toBe('end');
    expect(src.counts.subscribed).toBe(1);
  });

  it('follows the session through stats.state$: every state a status message, in the session vocabulary', async () => {
    const src = manualSource();
    const stats = createSessionStats();
    // The session sets its state in its stats' store; here the test does.
    const store = stateStoreOf(stats);
    dashboard = await startDashboard({ events$: src.events$, stats, start: 'now' });
    const page = await connect(`${dashboard.url}${EVENTS}`);
    const states: SessionState[] = [
      { status: 'streaming' },
      { status: 'paused' },
      { status: 'reconnecting', attempt: 1, error: new SvcError('connection_lost', 'lost') },
      { status: 'finishing' },
      { status: 'closing', reason: 'done' },
    ];
    for (const next of states) {
      store.set(next);
      expect(dashboard.session.view().status).toBe(next.status);
    }
    // A terminal state waits for the events to end (they carry the failure).
    store.set({ status: 'failed', error: new SvcError('connection_lost', 'lost') });
    expect(dashboard.session.view().status).toBe('closing');
    await page.waitFor((m) => m.filter((x) => x.event === 'status').length >= 6);
    expect(page.messages.filter((m) => m.event === 'status').map((m) => m.data.status)).toEqual(['connecting', 'streaming', 'paused', 'reconnecting', 'finishing', 'closing']);
  });

  it('sends each event once, never the state: bytes grow with the events', async () => {
    const src = manualSource();
    dashboard = await startDashboard({ events$: src.events$ });
    const page = await connect(`${dashboard.url}${EVENTS}`);
    let ndjson = 0;
    for (let i = 0; i < 300; i++) {
      const e = clip(`c${i}`, i % 2 ? '2' : '1', `line ${i}`, i * 1000);
      ndjson += JSON.stringify(e).length + 1;
      src.subject.next(e);
    }
    src.subject.complete();
    await page.closed;
    expect(eventsOf(page.messages)).toHaveLength(300);
    expect(page.messages.every((m) => m.event !== 'state')).toBe(true);
    expect(page.bytes()).toBeLessThan(ndjson * 2);
  });

  it('ends failed with the stable code and message', async () => {
    const src = manualSource();
    dashboard = await startDashboard({ events$: src.events$, start: 'now' });
    expect(src.counts.subscribed).toBe(1);
    src.subject.next(clip('c1', '1', 'Hello.', 0));
    src.subject.next({ type: 'error', error: 'transcription backend failed' });
    src.subject.error(new SvcError('internal_error', 'the service reported an error: transcription backend failed'));
    const page = await connect(`${dashboard.url}${EVENTS}`);
    await page.closed;
    // A page that joins after the end gets the status once (title and last status), then the end.
    expect(page.messages.map((m) => m.event)).toEqual(['event', 'event', 'status', 'end']);
    expect(page.messages[2]!.data).toEqual({ status: 'failed', title: 'session' });
    expect(page.messages.at(-1)!.data).toEqual({ status: 'failed', error: { code: 'internal_error', message: 'the service reported an error: transcription backend failed' } });
    expect(JSON.parse((await getRaw(`${dashboard.url}state`)).body)).toMatchObject({ status: 'failed', server_error: 'transcription backend failed', clips: [{ clip_uuid: 'c1' }] });
  });

  it('--exit-when-done semantics: finalServed resolves at the end with no page connected', async () => {
    const src = manualSource();
    dashboard = await startDashboard({ events$: src.events$, start: 'now' });
    src.subject.next({ type: 'done', duration_ms: 10 });
    src.subject.complete();
    expect((await dashboard.finalServed).status).toBe('done');
  });

  it('close() stops a running session and ends every page stream', async () => {
    const src = manualSource();
    dashboard = await startDashboard({ events$: src.events$ });
    const page = await connect(`${dashboard.url}${EVENTS}`);
    await page.waitFor((m) => m.length >= 1);
    await dashboard.close();
    await page.closed;
    expect(page.messages.at(-1)).toMatchObject({ event: 'end', data: { status: 'closed' } });
    expect(src.counts).toEqual({ subscribed: 1, unsubscribed: 1 });
  });
});

describe('the page and its assets', () => {
  it('serves the page, script and styles with a strict CSP, from this server only', async () => {
    dashboard = await startDashboard({ events$: manualSource().events$ });
    const page = await getRaw(dashboard.url);
    expect(page.status).toBe(200);
    expect(page.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(page.headers['content-security-policy']).toContain("default-src 'none'");
    expect(page.headers['content-security-policy']).toContain("script-src 'self'");
    expect(page.body).toBe(PAGE_HTML);
    const script = await pageScript();
    expect((await getRaw(`${dashboard.url}app.js`)).body).toBe(script);
    expect((await getRaw(`${dashboard.url}app.css`)).body).toBe(PAGE_CSS);
    expect((await getRaw(`${dashboard.url}nope`)).status).toBe(404);
    // Nothing is fetched from the internet: the only URL the page's own code names is the SVG namespace.
    const own = ['src/dashboard/page/render.js', 'src/dashboard/page/main.ts'].map((f) => readFileSync(f, 'utf8')).join('');
    const urls = `${PAGE_HTML}${own}${PAGE_CSS}`.match(/https?:\/\/[^\s'"]+/g) ?? [];
    expect(urls).toEqual(['http://www.w3.org/2000/svg']);
    // The script never parses data as markup, nor evaluates strings (the CSP forbids both).
    expect(script).not.toMatch(/innerHTML|outerHTML|insertAdjacentHTML|document\.write|\beval\(|new Function/);
  });

  it('refuses other Host names (DNS rebinding)', async () => {
    dashboard = await startDashboard({ events$: manualSource().events$ });
    expect((await getRaw(`${dashboard.url}state`, { host: 'attacker.example:80' })).status).toBe(403);
    expect((await getRaw(`${dashboard.url}state`, { host: `localhost:${dashboard.port}` })).status).toBe(200);
  });
});
