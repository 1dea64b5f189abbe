// A relay `from` Redis keeps its word to pages under bad input and faults, against a real
// redis-server and the real publisher: a cursor past the end of its stream (far in the future,
// or a number the session never had) and a malformed one are answered at once (a reset with the
// replay, the end again, or 400) and hold no stream slot; a page that joins while Redis is down
// gets 503 `redis_unavailable` with Retry-After before any header, and the relay client says so
// typed; the listing counts events as they arrive. Bounds, never wall-clock differences.
import { afterEach, describe, expect, it } from 'vitest';
import { lastValueFrom, tap, toArray } from 'rxjs';
import { createPublisher } from '../../src/fleet/publisher.js';
import type { Publisher, SessionPublisher } from '../../src/publishing.js';
import type { ServerEvent } from '../../src/schema/events.js';
import { listRelaySessions, relayMessages, relaySessionUrl, type RelayMessage } from '../../src/relay/client.js';
import { createRelay, type Relay } from '../../src/relay/server.js';
import { watchLoop } from '../faults/loopStall.js';
import { useRedis } from '../fleet/redisFixture.js';
import { startRedis } from '../fleet/redisServer.js';
import { openSse, type SseReader } from './sseReader.js';

const fixture = useRedis();
const relays: Relay[] = [];
const publishers: Publisher[] = [];
const pages: SseReader[] = [];
afterEach(async () => {
  for (const p of pages.splice(0)) p.close();
  await Promise.allSettled(relays.splice(0).map((r) => r.close()));
  await Promise.allSettled(publishers.splice(0).map((p) => p.close()));
});

let n = 0;
const topics = (i: number): ServerEvent => ({ type: 'topics', topics: [`t${i}`] });
const AUTH = { authorization: 'Bearer tok' };
/** What "at once" means here: well within a second, on a loaded machine. */
const ANSWER_BOUND_MS = 1000;

async function setup(url = fixture.server.url, relayOptions: Partial<Parameters<typeof createRelay>[0]> = {}) {
  const prefix = `ff${n++}`;
  const publisher = await createPublisher({ url, prefix, closeTimeoutMs: 2000 });
  publishers.push(publisher);
  const relay = createRelay({ token: 'tok', from: url, prefix, heartbeatMs: 60_000, retryMs: 1000, ...relayOptions });
  relays.push(relay);
  const { url: base } = await relay.listen();
  return { prefix, publisher, relay, base };
}

async function page(base: string, id: string, lastEventId?: string): Promise<SseReader> {
  const p = await openSse(`${base}/sessions/${id}/events`, lastEventId !== undefined ? { ...AUTH, 'last-event-id': lastEventId } : AUTH);
  pages.push(p);
  return p;
}

async function publish(s: SessionPublisher, from: number, to: number): Promise<void> {
  for (let i = from; i < to; i++) s.event(topics(i));
  await expect.poll(() => s.stats.pending, { interval: 5 }).toBe(0);
}

const eventTopics = (p: SseReader): string[] => p.messages.filter((m) => m.event === 'event').map((m) => JSON.parse(m.data).topics[0]);

describe('relay from Redis: every cursor answered at once', () => {
  it('past the end of its stream (far future, a number it never had): a reset and the replay, on a live and an ended session, no slot held', async () => {
    const { publisher, relay, base } = await setup(fixture.server.url, { maxStreams: 1 });
    const loop = watchLoop();
    const live = publisher.session('live');
    await publish(live, 0, 3);
    const ended = publisher.session('ended');
    await publish(ended, 0, 2);
    ended.end({ status: 'done' });
    await ended.settled;
    const first = await page(base, 'ended');
    await first.closed;
    const endCursor = first.messages.at(-1)!.id!;
    const [epoch, lastId] = endCursor.split(':') as [string, string];
    const lastMs = lastId.split('-')[0]!;
    for (const cursor of [`${epoch}:99999999999999-3`, `${epoch}:${lastMs}-999999999`]) {
      const p = await page(base, 'ended', cursor);
      // Answered at once: the reset, the replay from the oldest entry kept, the end; then closed.
      await p.waitFor((m) => m.at(-1)?.event === 'end', ANSWER_BOUND_MS);
      await p.closed;
      expect(p.status).toBe(200);
      expect(p.messages[0]!.event).toBe('reset');
      expect(JSON.parse(p.messages[0]!.data)).toEqual({ reason: 'lost', after: cursor });
      expect(eventTopics(p)).toEqual(['t0', 't1']);
    }
    // The end's own cursor: the page has everything; it is told the end again, and the stream closes.
    const again = await page(base, 'ended', endCursor);
    await again.closed;
    expect(again.messages.map((m) => m.event)).toEqual(['end']);
    expect(again.messages[0]!.id).toBe(endCursor);
    // The live session, from a far-future cursor of its own epoch: the replay at once, then what comes.
    const look = await page(base, 'live');
    await look.waitFor((m) => eventTopics({ messages: m } as SseReader).length === 3);
    look.close();
    const liveEpoch = look.messages.at(-1)!.id!.split(':')[0]!;
    const p = await page(base, 'live', `${liveEpoch}:99999999999999-3`);
    await p.waitFor((m) => eventTopics({ messages: m } as SseReader).length === 3, ANSWER_BOUND_MS);
    expect(JSON.parse(p.messages[0]!.data)).toEqual({ reason: 'lost', after: `${liveEpoch}:99999999999999-3` });
    await publish(live, 3, 4);
    await p.waitFor((m) => eventTopics({ messages: m } as SseReader).includes('t3'));
    p.close();
    // No slot is held by any of them: with maxStreams 1, the next page still gets in.
    await expect.poll(() => relay.stats.streams).toBe(0);
    const next = await page(base, 'live');
    expect(next.status).toBe(200);
    expect(relay.stats.refusedBusy).toBe(0);
    expect(loop.stop().busiestMs).toBeLessThanOrEqual(100);
  });

  it('a malformed cursor gets 400 before Redis is read, and holds nothing', async () => {
    const { publisher, relay, base } = await setup();
    const s = publisher.session('known');
    await publish(s, 0, 1);
    for (const cursor of ['garbage', 'E:abc', 'E:1-2-3', 'E:-1-1', `${'E'.repeat(40)}:1-1`, 'E:99999999999999999-1', '']) {
      const p = await page(base, 'known', cursor);
      if (cursor === '') {
        // No cursor at all is from the start.
        expect(p.status).toBe(200);
        p.close();
        continue;
      }
      await p.closed;
      expect([cursor, p.status, JSON.parse(p.body).code]).toEqual([cursor, 400, 'invalid_argument']);
    }
    await expect.poll(() => relay.stats.streams).toBe(0);
  });
});

describe('relay from Redis: refusals before the headers', () => {
  it('a page joining while Redis is down gets 503 redis_unavailable with Retry-After; the client says it typed; back, it joins', async () => {
    const local = await startRedis();
    try {
      const { publisher, relay, base } = await setup(local.url);
      const s = publisher.session('call');
      await publish(s, 0, 2);
      await expect.poll(() => relay.redisConnected).toBe(true);
      const loop = watchLoop();
      await local.stop();
      await expect.poll(() => relay.redisConnected).toBe(false);
      const refused = await page(base, 'call');
      await refused.closed;
      expect([refused.status, refused.headers['content-type'], JSON.parse(refused.body).code, refused.headers['retry-after']]).toEqual([503, 'application/json; charset=utf-8', 'redis_unavailable', '1']);
      expect(relay.stats.streams).toBe(0);
      // The relay client: a reconnecting message with the typed reason, then the refusal itself.
      const seen: RelayMessage[] = [];
      const err = await lastValueFrom(relayMessages(relaySessionUrl(base, 'call'), { token: 'tok', maxRetries: 1 }).pipe(tap((m) => seen.push(m)), toArray())).catch((e: unknown) => e);
      expect(err).toMatchObject({ name: 'ApiError', code: 'redis_unavailable', status: 503, retryable: true });
      expect(seen).toMatchObject([{ type: 'connection', state: 'reconnecting', error: { code: 'redis_unavailable' } }]);
      const stalls = loop.stop();
      expect(stalls.busiestMs).toBeLessThanOrEqual(100);
      // Redis back (empty: no persistence): the relay reconnects; the session is gone with it.
      await local.restart();
      await expect.poll(() => relay.redisConnected, { timeout: 10_000 }).toBe(true);
      await publish(s, 2, 3);
      const back = await page(base, 'call');
      expect(back.status).toBe(200);
      await back.waitFor((m) => m.some((x) => x.event === 'event'));
    } finally {
      await local.stop();
    }
  });
});

describe('relay from Redis: the listing', () => {
  it('counts events as they arrive, not only at status changes', async () => {
    const { publisher, base } = await setup();
    const s = publisher.session('counting');
    s.status('streaming');
    await publish(s, 0, 7);
    // The publisher's notes come every 15 s by default; the count is there within a second or so.
    await expect.poll(async () => (await listRelaySessions(base, { token: 'tok' })).find((x) => x.id === 'counting')?.events, { timeout: 5000 }).toBe(7);
    await publish(s, 7, 9);
    await expect.poll(async () => (await listRelaySessions(base, { token: 'tok' })).find((x) => x.id === 'counting')?.events, { timeout: 5000 }).toBe(9);
  });
});
