// The dashboard server over real sockets: the SSE protocol (snapshot first, then changes,
// then the final state and `end`), one session whatever the pages do, and what it serves.
import { request } from 'node:http';
import { Observable, Subject } from 'rxjs';
import { afterEach, describe, expect, it } from 'vitest';
import { SvcError, type ServerEvent } from 'svc-stream';
import { PAGE_CSS, PAGE_HTML, PAGE_JS } from '../../src/dashboard/page.js';
import { parseSse } from '../../src/dashboard/sse.js';
import { startDashboard, type RunningDashboard } from '../../src/dashboard/server.js';
import { createSessionStats } from '../../src/session/stats.js';
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

const states = (messages: SseMessage[]) => messages.filter((m) => m.event === 'state').map((m) => m.data);
const last = <T>(xs: T[]): T => xs[xs.length - 1]!;

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

describe('GET /events', () => {
  it('starts the session on the first page load, sends a late page the whole state first, then changes, then the final state and end', async () => {
    const src = manualSource();
    const stats = createSessionStats();
    dashboard = await startDashboard({ events$: src.events$, stats, title: 'call.wav' });
    const events = `${dashboard.url}events`;

    // Nothing runs until a page connects.
    const before = JSON.parse((await getRaw(`${dashboard.url}state`)).body);
    expect(before).toMatchObject({ type: 'state', started: false, phase: 'connecting', transcript: [] });
    expect(src.counts.subscribed).toBe(0);

    const first = await connect(events);
    await first.waitFor((m) => m.length >= 1);
    expect(first.messages[0]).toMatchObject({ event: 'state', data: { started: true, phase: 'connecting', title: 'call.wav' } });
    expect(src.counts.subscribed).toBe(1);

    stats.phase = 'streaming';
    src.subject.next(partial('c1', '1', 'Hello th'));
    src.subject.next(clip('c1', '1', 'Hello there.', 0));
    src.subject.next({ type: 'participant_role', pick: { speaker_label: '1', name: 'Agent' } });
    src.subject.next(partial('c2', '2', 'I was char'));
    src.subject.next({ type: 'topics', topics: ['Refund'] });
    await first.waitFor((m) => last(states(m)).topics.length === 1);
    expect(last(states(first.messages))).toMatchObject({ phase: 'streaming' });

    // A page that connects now (a reload) gets everything in its first message.
    const late = await connect(events);
    await late.waitFor((m) => m.length >= 1);
    expect(late.messages[0]!.event).toBe('state');
    const snapshot = late.messages[0]!.data;
    expect(snapshot).toMatchObject({
      phase: 'streaming',
      roles: { '1': { name: 'Agent' } },
      topics: ['Refund'],
      transcript: [
        { status: 'final', clip: { clip_uuid: 'c1', text: 'Hello there.' } },
        { status: 'partial', clip: { clip_uuid: 'c2', text: 'I was char' } },
      ],
    });
    expect(snapshot.clips).toHaveLength(1);
    expect(snapshot.events_received).toBe(0); // stats were passed: their counter, not ours

    // Pages come and go; the session is never restarted or stopped by them.
    first.close();
    await first.closed;
    expect(src.counts).toEqual({ subscribed: 1, unsubscribed: 0 });

    src.subject.next(clip('c2', '2', 'I was charged twice.', 1200));
    src.subject.next({ type: 'behavior_detection', detection: { behavior_uuid: 'b1', behavior_name: 'Greeting', speaker_label: '1' } });
    await late.waitFor((m) => last(states(m)).behaviors.length === 1);
    stats.phase = 'done';
    src.subject.next({ type: 'done', duration_ms: 4000 });
    src.subject.complete();

    await late.closed;
    const tail = late.messages.slice(-2);
    expect(tail.map((m) => m.event)).toEqual(['state', 'end']);
    expect(tail[0]!.data).toMatchObject({ phase: 'done', error: null, duration_ms: 4000, transcript: [{ status: 'final' }, { status: 'final' }] });
    const served = await dashboard.finalServed;
    expect(served.phase).toBe('done');

    // After the end, a page still gets the final state, then end, and the stream closes.
    const after = await connect(events);
    await after.closed;
    expect(after.messages.map((m) => m.event)).toEqual(['state', 'end']);
    expect(after.messages[0]!.data).toMatchObject({ phase: 'done', duration_ms: 4000 });
    expect(src.counts.subscribed).toBe(1);
  });

  it('coalesces a burst into few messages that end on the newest state', async () => {
    const src = manualSource();
    dashboard = await startDashboard({ events$: src.events$, throttleMs: 40 });
    const page = await connect(`${dashboard.url}events`);
    for (let i = 0; i < 300; i++) src.subject.next(clip(`c${i}`, i % 2 ? '2' : '1', `line ${i}`, i * 1000));
    await page.waitFor((m) => last(states(m)).clips.length === 300);
    expect(states(page.messages).length).toBeLessThan(10);
    expect(last(states(page.messages)).phase).toBe('streaming'); // no stats: streaming once events arrive
  });

  it('a page that stops reading skips states, and still gets the final state and end when it reads again', async () => {
    const src = manualSource();
    dashboard = await startDashboard({ events$: src.events$, throttleMs: 0 });
    const text = 'x'.repeat(2000);
    const received: string[] = [];
    const res = await new Promise<import('node:http').IncomingMessage>((resolve, reject) =>
      request(`${dashboard!.url}events`, { agent: false }, resolve).on('error', reject).end(),
    );
    res.setEncoding('utf8');
    res.pause(); // a stalled page: socket buffers fill, writes report backpressure
    res.on('data', (c: string) => received.push(c));
    const ended = new Promise<void>((resolve) => res.on('end', () => resolve()));
    for (let i = 0; i < 400; i++) {
      src.subject.next(clip(`c${i}`, '1', text, i));
      await new Promise((r) => setImmediate(r));
    }
    src.subject.next({ type: 'done', duration_ms: 400_000 });
    src.subject.complete();
    await new Promise((r) => setTimeout(r, 50));
    res.resume();
    await ended;
    const { messages } = parseSse(received.join(''));
    expect(messages.length).toBeLessThan(200); // states were skipped, not queued
    expect(messages.slice(-2).map((m) => m.event)).toEqual(['state', 'end']);
    expect(JSON.parse(messages.at(-2)!.data)).toMatchObject({ phase: 'done', duration_ms: 400_000 });
    expect(JSON.parse(messages.at(-2)!.data).clips).toHaveLength(400);
  });

  it('ends in error with the stable code and message', async () => {
    const src = manualSource();
    dashboard = await startDashboard({ events$: src.events$, start: 'now' });
    expect(src.counts.subscribed).toBe(1);
    src.subject.next(clip('c1', '1', 'Hello.', 0));
    src.subject.next({ type: 'error', error: 'transcription backend failed' });
    src.subject.error(new SvcError('internal_error', 'the service reported an error: transcription backend failed'));
    const page = await connect(`${dashboard.url}events`);
    await page.closed;
    expect(page.messages.map((m) => m.event)).toEqual(['state', 'end']);
    expect(page.messages[0]!.data).toMatchObject({
      phase: 'error',
      error: { code: 'internal_error', message: 'the service reported an error: transcription backend failed' },
      server_error: 'transcription backend failed',
      clips: [{ clip_uuid: 'c1' }],
    });
  });

  it('close() stops a running session and ends every page stream', async () => {
    const src = manualSource();
    dashboard = await startDashboard({ events$: src.events$ });
    const page = await connect(`${dashboard.url}events`);
    await page.waitFor((m) => m.length >= 1);
    await dashboard.close();
    await page.closed;
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
    expect((await getRaw(`${dashboard.url}app.js`)).body).toBe(PAGE_JS);
    expect((await getRaw(`${dashboard.url}app.css`)).body).toBe(PAGE_CSS);
    expect((await getRaw(`${dashboard.url}nope`)).status).toBe(404);
    // Nothing is fetched from the internet: the only URL anywhere is the SVG namespace.
    const urls = `${PAGE_HTML}${PAGE_JS}${PAGE_CSS}`.match(/https?:\/\/[^\s'"]+/g) ?? [];
    expect(urls).toEqual(['http://www.w3.org/2000/svg']);
    // The script never parses data as markup.
    expect(PAGE_JS).not.toMatch(/innerHTML|outerHTML|insertAdjacentHTML|document\.write/);
  });

  it('refuses other Host names (DNS rebinding)', async () => {
    dashboard = await startDashboard({ events$: manualSource().events$ });
    expect((await getRaw(`${dashboard.url}state`, { host: 'attacker.example:80' })).status).toBe(403);
    expect((await getRaw(`${dashboard.url}state`, { host: `localhost:${dashboard.port}` })).status).toBe(200);
  });
});
