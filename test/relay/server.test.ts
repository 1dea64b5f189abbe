// The relay on real sockets, read by node:http: listing, resume with Last-Event-ID, the
// origin allow-list and preflight, the token, a slow page bounded, many pages, the end.
import { request } from 'node:http';
import { Subject } from 'rxjs';
import { afterEach, describe, expect, it } from 'vitest';
import { createSessionStats, SessionError, type ServerEvent } from 'svc-stream';
import { createRelay, type Relay } from '../../src/relay/server.js';
import { eventIds, openSse } from './sseReader.js';
import { countersOf } from '../../src/session/stats.js';

const TOKEN = 'relay-test-token';
const AUTH = { authorization: `Bearer ${TOKEN}` };
const clip = (i: number, text = `line ${i}`): ServerEvent => ({ type: 'clip', clip: { clip_uuid: `c${i}`, speaker_label: '1', text, start_ms: i * 1000, duration_ms: 900 } });

let relay: Relay | undefined;
afterEach(async () => {
  await relay?.close();
  relay = undefined;
});

async function started(options: Partial<Parameters<typeof createRelay>[0]> = {}): Promise<{ relay: Relay; url: string }> {
  relay = createRelay({ token: TOKEN, origins: ['http://app.test:8080'], heartbeatMs: 60_000, ...options });
  const { url } = await relay.listen();
  return { relay, url };
}

function getJson(url: string, headers: Record<string, string> = {}, method = 'GET'): Promise<{ status: number; headers: Record<string, unknown>; body: any }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method, headers }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (text += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: text ? JSON.parse(text) : undefined }));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('createRelay', () => {
  it('lists sessions and streams one from the start: events with ids, the status, the end', async () => {
    const { relay, url } = await started();
    const events = new Subject<ServerEvent>();
    const session = relay.addSession({ id: 'call-1', title: 'call.wav' });
    relay.addSession({ id: 'call-2' });
    session.feed(events);
    events.next(clip(1));
    events.next(clip(2));

    const listing = await getJson(`${url}/sessions`, AUTH);
    expect(listing.status).toBe(200);
    expect(listing.body.sessions).toEqual([
      { id: 'call-1', title: 'call.wav', status: 'streaming', events: 2, firstRetained: 1, ended: false, clients: 0 },
      { id: 'call-2', title: 'call-2', status: 'pending', events: 0, firstRetained: 1, ended: false, clients: 0 },
    ]);

    const page = await openSse(`${url}/sessions/call-1/events`, AUTH);
    expect(page.status).toBe(200);
    expect(page.headers['content-type']).toBe('text/event-stream; charset=utf-8');
    await page.waitFor((m) => m.some((x) => x.event === 'status'));
    session.setStatus('reconnecting');
    events.next(clip(3));
    events.next({ type: 'done', duration_ms: 4000 });
    events.complete();
    await page.waitFor((m) => m.some((x) => x.event === 'end'));
    await page.closed;
    expect(page.messages.map((m) => m.event)).toEqual(['event', 'event', 'status', 'status', 'event', 'event', 'end']);
    expect(eventIds(page.messages)).toEqual([1, 2, 3, 4]);
    expect(JSON.parse(page.messages[0]!.data)).toEqual(clip(1));
    expect(page.messages.filter((m) => m.event === 'status').map((m) => JSON.parse(m.data))).toEqual([
      { status: 'streaming', title: 'call.wav' },
      { status: 'reconnecting', title: 'call.wav' },
    ]);
    expect(JSON.parse(page.messages.at(-1)!.data)).toEqual({ status: 'done' });
    await expect(session.ended).resolves.toEqual({ status: 'done' });
    expect((await getJson(`${url}/sessions`, AUTH)).body.sessions[0]).toMatchObject({ id: 'call-1', status: 'done', ended: true, events: 4 });
  });

  it('carries the label of the stats it follows: a status message before the first event it labels, again when it changes, and in the listing', async () => {
    const { relay, url } = await started();
    const events = new Subject<ServerEvent>();
    const stats = createSessionStats();
    const session = relay.addSession({ id: 'labelled', title: 'call.wav' });
    session.follow(stats.state$);
    session.feed(events);
    const page = await openSse(`${url}/sessions/labelled/events`, AUTH);
    await page.waitFor((m) => m.some((x) => x.event === 'status'));
    const scripted = { source: 'scenario', file: 'call.scenario.json' } as const;
    // Learnt by the session (the stats' one writer) when its connection is answered, before any event.
    const counters = countersOf(stats);
    counters.label = scripted;
    events.next(clip(1));
    counters.label = { ...scripted, note: 'a resumed segment could not be found in call.wav: speech segments only from there' };
    events.next(clip(2));
    events.complete();
    await page.closed;
    const order = page.messages.map((m) => {
      if (m.event !== 'status') return m.event;
      const d = JSON.parse(m.data) as { status: string; label?: { source: string; note?: string } };
      return `${d.status}:${d.label?.note ? 'noted' : d.label?.source ?? '-'}`;
    });
    expect(order).toEqual(['connecting:-', 'connecting:scenario', 'event', 'streaming:scenario', 'streaming:noted', 'event', 'end']);
    expect(session.label).toEqual(stats.label);
    expect((await getJson(`${url}/sessions`, AUTH)).body.sessions[0]).toMatchObject({ id: 'labelled', label: stats.label });
    // A page that joins after the end gets the last label with the status.
    const late = await openSse(`${url}/sessions/labelled/events`, AUTH);
    await late.closed;
    expect(late.messages.filter((m) => m.event === 'status').map((m) => JSON.parse(m.data).label)).toEqual([stats.label]);
  });

  it('resumes after Last-Event-ID (header or query), and a page joining after the end gets it all', async () => {
    const { relay, url } = await started();
    const events = new Subject<ServerEvent>();
    const session = relay.addSession({ id: 's' });
    session.feed(events);
    for (let i = 1; i <= 5; i++) events.next(clip(i));

    const resumed = await openSse(`${url}/sessions/s/events`, { ...AUTH, 'last-event-id': '3' });
    await resumed.waitFor((m) => eventIds(m).length === 2);
    expect(eventIds(resumed.messages)).toEqual([4, 5]);
    const byQuery = await openSse(`${url}/sessions/s/events?lastEventId=4`, AUTH);
    await byQuery.waitFor((m) => eventIds(m).length === 1);
    expect(eventIds(byQuery.messages)).toEqual([5]);
    events.next(clip(6));
    await resumed.waitFor((m) => eventIds(m).includes(6));
    events.error(new SessionError('connection_lost', 'the service went away'));
    await resumed.closed;
    expect(JSON.parse(resumed.messages.at(-1)!.data)).toEqual({ status: 'failed', error: { code: 'connection_lost', message: 'the service went away' } });
    byQuery.close();

    const late = await openSse(`${url}/sessions/s/events`, AUTH);
    await late.closed;
    expect(eventIds(late.messages)).toEqual([1, 2, 3, 4, 5, 6]);
    expect(late.messages.at(-1)!.event).toBe('end');
    // An id the session never had is refused, not silently taken as "from the start".
    const wrong = await getJson(`${url}/sessions/s/events`, { ...AUTH, 'last-event-id': '99' });
    expect(wrong.status).toBe(400);
    expect((await getJson(`${url}/sessions/s/events`, { ...AUTH, 'last-event-id': 'abc' })).status).toBe(400);
  });

  it('a page asking for trimmed events is told with a gap, then gets what the history holds', async () => {
    const { relay, url } = await started({ historyEvents: 3 });
    const events = new Subject<ServerEvent>();
    const session = relay.addSession({ id: 's' });
    session.feed(events);
    for (let i = 1; i <= 6; i++) events.next(clip(i));
    const page = await openSse(`${url}/sessions/s/events`, { ...AUTH, 'last-event-id': '1' });
    await page.waitFor((m) => eventIds(m).length === 3);
    expect(page.messages[0]!.event).toBe('gap');
    expect(JSON.parse(page.messages[0]!.data)).toEqual({ after: '1', next: '4', missed: 2 });
    expect(eventIds(page.messages)).toEqual([4, 5, 6]);
    expect(session.counters.eventsTrimmed).toBe(3);
    expect(session.info().firstRetained).toBe(4);
    page.close();
  });

  it('refuses an origin not on the list (403, no CORS headers), answers preflights, and sets CORS for a listed one', async () => {
    const { relay, url } = await started();
    relay.addSession({ id: 's' }).feed(new Subject<ServerEvent>());
    const evil = await getJson(`${url}/sessions/s/events`, { ...AUTH, origin: 'http://evil.test' });
    expect(evil.status).toBe(403);
    expect(evil.body.code).toBe('relay_origin_refused');
    expect(evil.headers['access-control-allow-origin']).toBeUndefined();
    expect((await getJson(`${url}/sessions`, { ...AUTH, origin: 'null' })).status).toBe(403);
    const evilPreflight = await getJson(`${url}/sessions/s/events`, { origin: 'http://evil.test', 'access-control-request-method': 'GET' }, 'OPTIONS');
    expect(evilPreflight.status).toBe(403);
    expect(relay.stats.refusedOrigin).toBe(3);

    const preflight = await getJson(`${url}/sessions/s/events`, { origin: 'http://app.test:8080', 'access-control-request-method': 'GET', 'access-control-request-headers': 'authorization,last-event-id' }, 'OPTIONS');
    expect(preflight.status).toBe(204);
    expect(preflight.headers['access-control-allow-origin']).toBe('http://app.test:8080');
    expect(preflight.headers['access-control-allow-headers']).toBe('authorization, last-event-id, cache-control');
    const page = await openSse(`${url}/sessions/s/events`, { ...AUTH, origin: 'http://app.test:8080' });
    expect(page.status).toBe(200);
    expect(page.headers['access-control-allow-origin']).toBe('http://app.test:8080');
    expect(page.headers['vary']).toBe('Origin');
    page.close();
  });

  it('refuses a missing or wrong token (401) and takes it from the header, the query or the cookie', async () => {
    const { relay, url } = await started();
    relay.addSession({ id: 's' }).feed(new Subject<ServerEvent>());
    for (const headers of [{}, { authorization: 'Bearer nope' }, { authorization: `Basic ${TOKEN}` }, { cookie: 'svc_relay_token=nope' }]) {
      const r = await getJson(`${url}/sessions/s/events`, headers);
      expect(r.status).toBe(401);
      expect(r.body).toEqual({ code: 'relay_unauthorized', message: 'a valid relay token is required' });
    }
    expect((await getJson(`${url}/sessions`)).status).toBe(401);
    expect(relay.stats.refusedToken).toBe(5);
    for (const [path, headers] of [
      [`/sessions/s/events?token=${TOKEN}`, {}],
      ['/sessions/s/events', { cookie: `other=1; svc_relay_token=${TOKEN}` }],
    ] as const) {
      const page = await openSse(url + path, headers);
      expect(page.status).toBe(200);
      page.close();
    }
    expect((await getJson(`${url}/sessions/nope/events`, AUTH)).status).toBe(404);
    expect((await getJson(`${url}/elsewhere`, AUTH)).status).toBe(404);
  });

  it('a token function decides per session', async () => {
    const { relay, url } = await started({ token: (token, id) => token === `for-${id}` });
    relay.addSession({ id: 'a' });
    relay.addSession({ id: 'b' });
    expect((await openSse(`${url}/sessions/a/events`, { authorization: 'Bearer for-a' })).status).toBe(200);
    expect((await getJson(`${url}/sessions/b/events`, { authorization: 'Bearer for-a' })).status).toBe(401);
  });

  it('a page that cannot keep up is never buffered: the relay writes while its socket has room, then skips it ahead past the trimmed history', async () => {
    const { relay, url } = await started({ maxClientBufferBytes: 64 << 10, historyEvents: 50 });
    const events = new Subject<ServerEvent>();
    const session = relay.addSession({ id: 's' });
    session.feed(events);
    const slow = await openSse(`${url}/sessions/s/events`, AUTH);
    const big = 'x'.repeat(16 << 10);
    const total = 1500; // ~24 MB of events, pushed faster than any socket takes them
    for (let i = 1; i <= total; i++) events.next(clip(i, big));
    // At most the bound and one event were written meanwhile; the rest waits in the (bounded) history.
    expect(session.counters.bytesSent).toBeLessThanOrEqual((64 << 10) + (17 << 10));
    events.complete();
    await slow.closed;
    const ids = eventIds(slow.messages);
    const gap = slow.messages.findIndex((m) => m.event === 'gap');
    expect(gap).toBeGreaterThan(0);
    const before = ids.filter((id) => id < total - 49);
    expect(before).toEqual(Array.from({ length: before.length }, (_, i) => i + 1));
    expect(JSON.parse(slow.messages[gap]!.data)).toEqual({ after: String(before.length), next: String(total - 49), missed: total - 50 - before.length });
    expect(ids.slice(before.length)).toEqual(Array.from({ length: 50 }, (_, i) => total - 49 + i));
    expect(session.counters.gaps).toBe(1);
    expect(session.counters.bytesSent).toBeLessThan(2 << 20);
  });

  it('a page whose socket stays full is dropped after the stall, and resumes where it was with Last-Event-ID', async () => {
    const { relay, url } = await started({ maxClientBufferBytes: 64 << 10, stallTimeoutMs: 300, historyBytes: 64 << 20 });
    const events = new Subject<ServerEvent>();
    const session = relay.addSession({ id: 's' });
    session.feed(events);
    const slow = await openSse(`${url}/sessions/s/events`, AUTH);
    slow.response.pause(); // reads nothing more
    const big = 'x'.repeat(16 << 10);
    const total = 1500; // ~24 MB: more than the kernel's socket buffers hold
    for (let i = 1; i <= total; i++) events.next(clip(i, big));
    await expect.poll(() => session.counters.clientsDropped, { timeout: 10_000 }).toBe(1);
    // What reached the socket is the kernel's buffers plus the bound, not the 24 MB.
    expect(session.counters.bytesSent).toBeLessThan(12 << 20);
    slow.response.resume();
    await slow.closed;
    const got = eventIds(slow.messages);
    const last = got.at(-1) ?? 0;
    expect(got).toEqual(Array.from({ length: got.length }, (_, i) => i + 1));
    const again = await openSse(`${url}/sessions/s/events`, { ...AUTH, 'last-event-id': String(last) });
    await again.waitFor((m) => eventIds(m).length >= 5, 10_000);
    expect(eventIds(again.messages).slice(0, 5)).toEqual([1, 2, 3, 4, 5].map((k) => last + k));
    again.close();
  }, 30_000);

  it('serves many pages of one session the same events, each framed once', async () => {
    const { relay, url } = await started();
    const events = new Subject<ServerEvent>();
    const session = relay.addSession({ id: 's' });
    session.feed(events);
    const pages = await Promise.all(Array.from({ length: 8 }, () => openSse(`${url}/sessions/s/events`, AUTH)));
    for (let i = 1; i <= 20; i++) events.next(clip(i));
    events.complete();
    await Promise.all(pages.map((p) => p.closed));
    for (const p of pages) expect(eventIds(p.messages)).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
    expect(session.info().clients).toBe(0);
    expect(relay.stats.streams).toBe(0);
  });

  it('bounds streams (503 relay_busy), session ids, and options', async () => {
    const { relay, url } = await started({ maxStreams: 2 });
    relay.addSession({ id: 's' });
    const a = await openSse(`${url}/sessions/s/events`, AUTH);
    const b = await openSse(`${url}/sessions/s/events`, AUTH);
    const c = await getJson(`${url}/sessions/s/events`, AUTH);
    expect(c.status).toBe(503);
    expect(c.body.code).toBe('relay_busy');
    expect(relay.stats.refusedBusy).toBe(1);
    a.close();
    b.close();
    expect(() => relay.addSession({ id: 'has space' })).toThrow(expect.objectContaining({ code: 'invalid_argument' }));
    expect(() => relay.addSession({ id: 's' })).toThrow(expect.objectContaining({ code: 'invalid_argument' }));
    expect(() => createRelay({ token: 't', origins: ['http://a.test/path'] })).toThrow(expect.objectContaining({ code: 'invalid_argument' }));
    expect(() => createRelay({ token: 't', historyEvents: 0 })).toThrow(expect.objectContaining({ code: 'invalid_argument' }));
    expect(() => createRelay({} as never)).toThrow(expect.objectContaining({ code: 'invalid_argument' }));
    // A request head past the bound is refused by the server itself (431).
    expect((await getJson(`${url}/sessions`, { ...AUTH, 'x-pad': 'y'.repeat(16 << 10) })).status).toBe(431);
  });

  it('sends each event once however many states it changes: bytes grow with the events', async () => {
    const { relay, url } = await started();
    const events = new Subject<ServerEvent>();
    const session = relay.addSession({ id: 's' });
    session.feed(events);
    const page = await openSse(`${url}/sessions/s/events`, AUTH);
    let ndjson = 0;
    for (let i = 1; i <= 200; i++) {
      const e = clip(i);
      ndjson += JSON.stringify(e).length + 1;
      events.next(e);
    }
    events.complete();
    await page.closed;
    expect(session.counters.bytesSent).toBeLessThan(ndjson * 2);
  });
});
