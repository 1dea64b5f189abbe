// A relay `from` Redis, in process, against a real redis-server and the real publisher: the
// listing, a page from the start, resume on another relay with Last-Event-ID (each entry once,
// in order), resets (trimmed, replaced), a hole shown as a gap, a slow page cut off at its
// bound that resumes, and one reader per relay whatever the number of pages.
import { afterEach, describe, expect, it } from 'vitest';
import type { ServerEvent } from '../../src/schema/events.js';
import { createPublisher } from '../../src/fleet/publisher.js';
import type { Publisher, SessionPublisher } from '../../src/publishing.js';
import { fleetKeys } from '../../src/fleet/streamEntries.js';
import { listRelaySessions } from '../../src/relay/client.js';
import { createRelay, type Relay } from '../../src/relay/server.js';
import { useRedis } from '../fleet/redisFixture.js';
import { openSse, type SseReader } from './sseReader.js';

const relays: Relay[] = [];
const publishers: Publisher[] = [];
const pages: SseReader[] = [];
const fixture = useRedis(['--stream-node-max-entries', '4']);
afterEach(async () => {
  for (const p of pages.splice(0)) p.close();
  await Promise.allSettled(relays.splice(0).map((r) => r.close()));
  await Promise.allSettled(publishers.splice(0).map((p) => p.close()));
});

let n = 0;
const topics = (i: number): ServerEvent => ({ type: 'topics', topics: [`t${i}`] });

async function setup(options: { relays?: number; relayOptions?: Partial<Parameters<typeof createRelay>[0]>; publisher?: Parameters<typeof createPublisher>[0] } = {}) {
  const prefix = `r${n++}`;
  const publisher = await createPublisher({ url: fixture.server.url, prefix, closeTimeoutMs: 2000, ...options.publisher });
  publishers.push(publisher);
  const urls: string[] = [];
  const made: Relay[] = [];
  for (let i = 0; i < (options.relays ?? 1); i++) {
    const relay = createRelay({ token: 'tok', from: fixture.server.url, prefix, heartbeatMs: 60_000, ...options.relayOptions });
    relays.push(relay);
    made.push(relay);
    urls.push((await relay.listen()).url);
  }
  return { prefix, publisher, urls, relays: made };
}

const AUTH = { authorization: 'Bearer tok' };
async function page(url: string, id: string, lastEventId?: string): Promise<SseReader> {
  const p = await openSse(`${url}/sessions/${id}/events`, lastEventId ? { ...AUTH, 'last-event-id': lastEventId } : AUTH);
  pages.push(p);
  return p;
}
const eventTopics = (p: SseReader): string[] => p.messages.filter((m) => m.event === 'event').map((m) => JSON.parse(m.data).topics[0]);
const lastId = (p: SseReader): string => p.messages.filter((m) => m.id !== undefined).at(-1)!.id!;

async function publish(s: SessionPublisher, from: number, to: number): Promise<void> {
  for (let i = from; i < to; i++) s.event(topics(i));
  await expect.poll(() => s.stats.pending, { interval: 5 }).toBe(0);
}

describe('relay from Redis', () => {
  it('lists the fleet, serves a page from the start to the end, with ids every relay reads', async () => {
    const { publisher, urls } = await setup();
    const a = publisher.session('call-a', { title: 'a.wav' });
    const b = publisher.session('call-b');
    a.status('streaming');
    await publish(a, 0, 3);
    await publish(b, 0, 1);
    b.end({ status: 'failed', error: { code: 'connection_lost', message: 'gone' } });
    await b.settled;
    await expect.poll(async () => (await listRelaySessions(urls[0]!, { token: 'tok' })).map((s) => `${s.id}:${s.status}`)).toEqual(['call-a:streaming', 'call-b:failed']);
    const listing = await listRelaySessions(urls[0]!, { token: 'tok' });
    expect(listing[0]).toMatchObject({ id: 'call-a', title: 'a.wav', ended: false });
    expect(listing[1]).toMatchObject({ ended: true, events: 1, error: { code: 'connection_lost', message: 'gone' } });

    const p = await page(urls[0]!, 'call-a');
    expect(p.status).toBe(200);
    await p.waitFor((m) => m.filter((x) => x.event === 'event').length === 3);
    await publish(a, 3, 5);
    a.end({ status: 'done' });
    await p.closed;
    expect(p.messages.map((m) => m.event)).toEqual(['status', 'status', 'event', 'event', 'event', 'event', 'event', 'end']);
    expect(JSON.parse(p.messages[0]!.data)).toEqual({ status: 'connecting', title: 'a.wav' });
    expect(JSON.parse(p.messages[1]!.data)).toEqual({ status: 'streaming', title: 'a.wav' });
    expect(eventTopics(p)).toEqual(['t0', 't1', 't2', 't3', 't4']);
    // Every message that moves the page carries its position: EPOCH:MS-SEQ, SEQ 1, 2, 3 …
    expect(p.messages.map((m) => Number(m.id!.split('-').at(-1)))).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
  });

  it('a page that loses its relay resumes on another with Last-Event-ID: every entry once, in order', async () => {
    const { publisher, urls, relays } = await setup({ relays: 2 });
    const s = publisher.session('call');
    await publish(s, 0, 10);
    const first = await page(urls[0]!, 'call');
    await first.waitFor((m) => m.filter((x) => x.event === 'event').length === 10);
    const cursor = lastId(first);
    await relays[0]!.close();
    await publish(s, 10, 20);
    s.end({ status: 'done' });
    const second = await page(urls[1]!, 'call', cursor);
    await second.closed;
    expect([...eventTopics(first), ...eventTopics(second)]).toEqual(Array.from({ length: 20 }, (_, i) => `t${i}`));
    expect(second.messages.some((m) => m.event === 'reset' || m.event === 'gap')).toBe(false);
    expect(second.messages.at(-1)!.event).toBe('end');
  });

  it('a cursor older than what is kept gets an explicit reset, then the oldest entry kept', async () => {
    let now = 5_000_000;
    const { publisher, urls } = await setup({ publisher: { retentionMs: 10_000, now: () => now } });
    const s = publisher.session('long');
    await publish(s, 0, 2);
    const p = await page(urls[0]!, 'long');
    await p.waitFor((m) => m.filter((x) => x.event === 'event').length === 2);
    const cursor = lastId(p);
    p.close();
    for (let i = 2; i < 40; i++) {
      now += 1000;
      await publish(s, i, i + 1);
    }
    const back = await page(urls[0]!, 'long', cursor);
    await back.waitFor((m) => m.filter((x) => x.event === 'event').at(-1)?.data.includes('t39') === true);
    expect(back.messages[0]!.event).toBe('reset');
    expect(JSON.parse(back.messages[0]!.data)).toEqual({ reason: 'trimmed', after: cursor });
    // Then what is kept, from its oldest entry, the session's status first (its start was trimmed).
    expect(back.messages[1]!.event).toBe('status');
    const kept = eventTopics(back);
    expect(kept.at(-1)).toBe('t39');
    expect(kept).toEqual(Array.from({ length: kept.length }, (_, i) => `t${40 - kept.length + i}`));
    expect(kept.length).toBeLessThan(20);
  });

  it('a new run of the session id: a page on the old run is reset (replaced) and follows the new one', async () => {
    const { prefix, urls } = await setup();
    const one = await createPublisher({ url: fixture.server.url, prefix });
    const two = await createPublisher({ url: fixture.server.url, prefix });
    publishers.push(one, two);
    const old = one.session('same');
    await publish(old, 0, 3);
    const p = await page(urls[0]!, 'same');
    await p.waitFor((m) => m.filter((x) => x.event === 'event').length === 3);
    const fresh = two.session('same');
    await publish(fresh, 100, 102);
    await p.waitFor((m) => m.filter((x) => x.event === 'event').length === 5);
    const reset = p.messages.findIndex((m) => m.event === 'reset');
    expect(reset).toBeGreaterThan(0);
    expect(JSON.parse(p.messages[reset]!.data)).toMatchObject({ reason: 'replaced' });
    expect(eventTopics(p)).toEqual(['t0', 't1', 't2', 't100', 't101']);
    // A page resuming on the old run's cursor is reset too.
    const late = await page(urls[0]!, 'same', p.messages.filter((m) => m.event === 'event')[1]!.id);
    await late.waitFor((m) => m.filter((x) => x.event === 'event').length === 2);
    expect(late.messages[0]!.event).toBe('reset');
    expect(eventTopics(late)).toEqual(['t100', 't101']);
  });

  it('a hole in the stream (entries never published) reaches the page as a gap with the count', async () => {
    const { prefix, publisher, urls } = await setup();
    const s = publisher.session('holes');
    await publish(s, 0, 2);
    const key = fleetKeys(prefix).stream('holes');
    const [topId, fields] = ((await fixture.admin.xrevrange(key, '+', '-', 'COUNT', 1)) as [string, string[]][])[0]!;
    const epoch = fields[fields.indexOf('e') + 1]!;
    const [ms, seq] = topId!.split('-').map(Number) as [number, number];
    // Entries seq+1 … seq+3 never made it; seq+4 did.
    await fixture.admin.xadd(key, `${ms + 1}-${seq + 4}`, 'e', epoch, 'k', 'event', 'd', JSON.stringify(topics(9)));
    const p = await page(urls[0]!, 'holes');
    await p.waitFor((m) => m.some((x) => x.event === 'gap') && eventTopics({ messages: m } as SseReader).includes('t9'));
    const gap = p.messages.find((m) => m.event === 'gap')!;
    expect(JSON.parse(gap.data)).toMatchObject({ missed: 3 });
  });

  it('answers 404 for an unknown session, 400 for a cursor it cannot read, 401 without the token', async () => {
    const { urls } = await setup();
    expect((await page(urls[0]!, 'nobody')).status).toBe(404);
    // A cursor no relay of the fleet writes is refused before Redis is read.
    const bad = await openSse(`${urls[0]}/sessions/x/events`, { ...AUTH, 'last-event-id': '17' });
    pages.push(bad);
    expect(bad.status).toBe(400);
    const { publisher, urls: u2 } = await setup();
    publisher.session('known').event(topics(1));
    await expect.poll(async () => (await listRelaySessions(u2[0]!, { token: 'tok' })).length).toBe(1);
    const wrong = await openSse(`${u2[0]}/sessions/known/events`, { ...AUTH, 'last-event-id': '17' });
    pages.push(wrong);
    expect(wrong.status).toBe(400);
    const noToken = await openSse(`${u2[0]}/sessions/known/events`);
    pages.push(noToken);
    expect(noToken.status).toBe(401);
  });

  it('one reader per relay: a hundred pages on one session read it through two connections', async () => {
    const { prefix, publisher, urls } = await setup();
    const s = publisher.session('popular');
    await publish(s, 0, 5);
    const many = await Promise.all(Array.from({ length: 100 }, () => page(urls[0]!, 'popular')));
    await Promise.all(many.map((p) => p.waitFor((m) => m.filter((x) => x.event === 'event').length === 5)));
    await publish(s, 5, 10);
    s.end({ status: 'done' });
    await Promise.all(many.map((p) => p.closed));
    for (const p of many) expect(eventTopics(p)).toEqual(Array.from({ length: 10 }, (_, i) => `t${i}`));
    const clients = String(await fixture.admin.client('LIST')).split('\n').filter((l) => l.includes('name=svc-stream:relay'));
    expect(clients).toHaveLength(2);
    void prefix;
  });

  it('a page that stops reading is cut off at its bound, and resumes from its cursor', async () => {
    const { publisher, urls, relays: [relay] } = await setup({ relayOptions: { maxClientBufferBytes: 64 << 10, stallTimeoutMs: 300 } });
    const s = publisher.session('big');
    const slow = await page(urls[0]!, 'big');
    const big = (i: number): ServerEvent => ({ type: 'summary', text: `${i} ${'x'.repeat(16 << 10)}` });
    const total = 1500; // ~24 MB: more than the kernel's socket buffers hold
    // The first event is read before the page stops, so it holds a cursor to resume from.
    s.event(big(0));
    await slow.waitFor((m) => m.some((x) => x.event === 'event'));
    slow.response.pause(); // reads nothing more
    for (let i = 1; i < total; i++) s.event(big(i));
    s.end({ status: 'done' });
    await s.settled;
    await expect.poll(() => relay!.stats.streams, { timeout: 10_000 }).toBe(0); // cut off: its socket stayed full for the stall
    slow.response.resume();
    await slow.closed;
    const got = slow.messages.filter((m) => m.event === 'event');
    expect(got.length).toBeLessThan(total);
    expect(slow.messages.some((m) => m.event === 'end')).toBe(false);
    const rest = await page(urls[0]!, 'big', got.at(-1)!.id);
    await rest.closed;
    const all = [...got, ...rest.messages.filter((m) => m.event === 'event')].map((m) => Number(JSON.parse(m.data).text.split(' ')[0]));
    expect(all).toEqual(Array.from({ length: total }, (_, i) => i));
    expect(rest.messages.at(-1)!.event).toBe('end');
  }, 60_000);
});
