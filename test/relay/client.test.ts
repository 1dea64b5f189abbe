// The relay client (fetch + the SSE parser) against the real relay on loopback: a fold of
// the relayed events, a cut connection resumed without loss or repeat, typed errors.
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { firstValueFrom, from, lastValueFrom, Subject, tap, toArray } from 'rxjs';
import { afterEach, describe, expect, it } from 'vitest';
import { SessionError, splitSession, type ServerEvent } from 'svc-stream';
import { listRelaySessions, relayEvents, relayMessages, relaySessionUrl } from '../../src/relay/client.js';
import { createRelay, type Relay } from '../../src/relay/server.js';

const TOKEN = 'client-test-token';
const clip = (i: number): ServerEvent => ({ type: 'clip', clip: { clip_uuid: `c${i}`, speaker_label: String((i % 2) + 1), text: `line ${i}`, start_ms: i * 1000, duration_ms: 900 } });

let relay: Relay | undefined;
let server: Server | undefined;
afterEach(async () => {
  await relay?.close();
  server?.closeAllConnections();
  await new Promise((r) => (server ? server.close(r) : r(undefined)));
  relay = server = undefined;
});

/** The relay mounted in our own server, so a test can cut a page's connection. */
async function mounted(): Promise<{ relay: Relay; base: string; responses: ServerResponse[] }> {
  relay = createRelay({ token: TOKEN, heartbeatMs: 60_000 });
  const responses: ServerResponse[] = [];
  const r = relay;
  server = createServer((req, res) => {
    responses.push(res);
    if (!r.handle(req, res)) res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
  return { relay: r, base: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`, responses };
}

describe('relay client', () => {
  it('folds the relayed events to the same snapshot as the source, and completes on end', async () => {
    const { relay, base } = await mounted();
    const source = new Subject<ServerEvent>();
    relay.addSession({ id: 'call' }).feed(source);
    const all: ServerEvent[] = [
      { type: 'conversation_type', pick: { conversation_type_uuid: 't', name: 'Support', selection_source: 'inferred' } },
      clip(1),
      { type: 'participant_role', pick: { speaker_label: '1', name: 'Agent' } },
      { type: 'topics', topics: ['Refund'] },
      { type: 'unknown', event_type: 'some_future_event', data: { anything: [1, 2] } },
      clip(2),
      { type: 'done', duration_ms: 3000 },
    ];
    const statuses: string[] = [];
    const pageSnapshot = lastValueFrom(splitSession(relayEvents(relaySessionUrl(base, 'call'), { token: TOKEN, onStatus: (s) => statuses.push(s) })).snapshot$);
    // The page is connected (its first status) before the events are published.
    await expect.poll(() => statuses).toContain('live');
    for (const e of all) source.next(e);
    source.complete();
    const expected = await lastValueFrom(splitSession(from(all)).snapshot$);
    expect(await pageSnapshot).toEqual(expected);
    expect(statuses[0]).toBe('live');
    expect(statuses).toContain('done');
  });

  it('resumes a cut connection with Last-Event-ID: every event once, in order', async () => {
    const { relay, base, responses } = await mounted();
    const source = new Subject<ServerEvent>();
    relay.addSession({ id: 's' }).feed(source);
    const messages: string[] = [];
    const done = lastValueFrom(relayMessages(relaySessionUrl(base, 's'), { token: TOKEN, retryMs: 20 }).pipe(toArray()));
    const seen = lastValueFrom(relayEvents(relaySessionUrl(base, 's'), { token: TOKEN, retryMs: 20 }).pipe(tap((e) => messages.push(e.type === 'clip' ? e.clip.clip_uuid : e.type)), toArray()));
    for (let i = 1; i <= 5; i++) source.next(clip(i));
    await expect.poll(() => messages.length).toBe(5);
    for (const res of responses) res.socket?.destroy(); // the network drops every page
    for (let i = 6; i <= 10; i++) source.next(clip(i));
    source.complete();
    const all = await done;
    await seen;
    const ids = all.flatMap((m) => (m.type === 'event' ? [m.id] : []));
    expect(ids).toEqual(['1', '2', '3', '4', '5', '6', '7', '8', '9', '10']);
    expect(all.some((m) => m.type === 'connection' && m.state === 'reconnecting')).toBe(true);
    expect(messages).toEqual(['c1', 'c2', 'c3', 'c4', 'c5', 'c6', 'c7', 'c8', 'c9', 'c10']);
  });

  it('errors with typed codes: a wrong token, an unknown session, a failed session, a gap, nothing listening', async () => {
    const { relay, base } = await mounted();
    const source = new Subject<ServerEvent>();
    relay.addSession({ id: 's' }).feed(source);
    await expect(firstValueFrom(relayEvents(relaySessionUrl(base, 's'), { token: 'wrong' }))).rejects.toMatchObject({ name: 'ApiError', code: 'relay_unauthorized', status: 401 });
    await expect(firstValueFrom(relayEvents(relaySessionUrl(base, 'nope'), { token: TOKEN }))).rejects.toMatchObject({ code: 'not_found' });
    await expect(listRelaySessions(base, { token: 'wrong' })).rejects.toMatchObject({ code: 'relay_unauthorized' });
    expect((await listRelaySessions(base, { token: TOKEN })).map((s) => s.id)).toEqual(['s']);

    const failed = lastValueFrom(relayEvents(relaySessionUrl(base, 's'), { token: TOKEN }));
    source.next(clip(1));
    source.error(new SessionError('connection_lost', 'gone'));
    await expect(failed).rejects.toSatisfy((e) => e instanceof SessionError && e.code === 'connection_lost' && e.message === 'gone');

    const trimmed = createRelay({ token: null, historyEvents: 2, heartbeatMs: 60_000 });
    const t = trimmed.addSession({ id: 't' });
    t.feed(from([clip(1), clip(2), clip(3), clip(4)]));
    const { url } = await trimmed.listen();
    await expect(lastValueFrom(relayEvents(relaySessionUrl(url, 't')))).rejects.toMatchObject({ code: 'relay_gap' });
    const gaps: number[] = [];
    const rest = await lastValueFrom(relayEvents(relaySessionUrl(url, 't'), { onGap: (g) => gaps.push(g.missed) }).pipe(toArray()));
    expect(gaps).toEqual([2]);
    expect(rest.map((e) => (e.type === 'clip' ? e.clip.clip_uuid : e.type))).toEqual(['c3', 'c4']);
    await trimmed.close();
    // Nothing listens there any more.
    await expect(lastValueFrom(relayEvents(relaySessionUrl(url, 't'), { maxRetries: 1, retryMs: 10 }))).rejects.toMatchObject({ code: 'connection_failed' });
  });

  it('refuses a stream that breaks the contract', async () => {
    server = createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.end('id: 1\nevent: event\ndata: {"type":"clip","clip":{"clip_uuid":5}}\n\n');
    });
    await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/sessions/x/events`;
    await expect(lastValueFrom(relayEvents(url))).rejects.toMatchObject({ code: 'malformed_frame' });
  });
});
