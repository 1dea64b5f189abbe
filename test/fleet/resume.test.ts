// Exact resume across relay processes, against a real redis-server: two publishers, two relay
// processes, a page (a plain SSE client) following one session on relay 1. Relay 1 is killed
// (SIGKILL) mid-session and the page resumes on relay 2 with its Last-Event-ID: the events it
// got, concatenated, are the session's own, each once, in order. Then Redis restarts without
// persistence mid-session: the page is told with an explicit reset, never a silent gap.
import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { afterEach, describe, expect, it } from 'vitest';
import type { ServerEvent } from '../../src/schema/events.js';
import { createPublisher } from '../../src/fleet/publisher.js';
import type { Publisher, SessionPublisher } from '../../src/publishing.js';
import { listRelaySessions } from '../../src/relay/client.js';
import { openSse, type SseReader } from '../relay/sseReader.js';
import { startRedis, type RunningRedis } from './redisServer.js';

const children: ChildProcess[] = [];
const cleanup: (() => Promise<unknown> | void)[] = [];
afterEach(async () => {
  for (const c of children.splice(0)) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  for (const f of cleanup.splice(0).reverse()) await f();
});

/** A relay process on `redis`; resolves with its URL once it listens. */
async function relayProcess(redis: RunningRedis, prefix: string): Promise<{ url: string; child: ChildProcess; exited: Promise<void> }> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'test/fleet/relayProcess.ts', redis.url, prefix], { stdio: ['ignore', 'pipe', 'inherit'] });
  children.push(child);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const url = await new Promise<string>((resolve, reject) => {
    const lines = createInterface({ input: child.stdout! });
    lines.once('line', resolve);
    child.once('exit', (code) => reject(new Error(`the relay process exited with ${code}`)));
  });
  return { url, child, exited };
}

const topics = (session: string, i: number): ServerEvent => ({ type: 'topics', topics: [`${session}-${i}`] });
const labels = (p: SseReader, from = 0): string[] => p.messages.slice(from).filter((m) => m.event === 'event').map((m) => JSON.parse(m.data).topics[0]);
const lastId = (p: SseReader): string => p.messages.filter((m) => m.id !== undefined).at(-1)!.id!;

/** A live session: `step(n)` publishes n more events (and returns once Redis has them). */
function live(publisher: Publisher, id: string) {
  const session: SessionPublisher = publisher.session(id, { title: `${id}.wav` });
  session.status('streaming');
  const own: string[] = [];
  return {
    own,
    session,
    async step(n: number) {
      for (let k = 0; k < n; k++) {
        const e = topics(id, own.length);
        own.push(`${id}-${own.length}`);
        session.event(e);
      }
      await expect.poll(() => session.stats.pending, { interval: 5, timeout: 10_000 }).toBe(0);
    },
  };
}

describe('resume across relays', () => {
  it('relay 1 is SIGKILLed mid-session: the page resumes on relay 2 with its Last-Event-ID, every event once, in order', async () => {
    const redis = await startRedis();
    cleanup.push(() => redis.stop());
    const prefix = 'fleet';
    const one = await createPublisher({ url: redis.url, prefix });
    const two = await createPublisher({ url: redis.url, prefix });
    cleanup.push(() => one.close(), () => two.close());
    const a = live(one, 'call-a');
    const b = live(two, 'call-b');
    const [r1, r2] = await Promise.all([relayProcess(redis, prefix), relayProcess(redis, prefix)]);
    await a.step(5);
    await b.step(3);

    // Both relays list both publishers' calls.
    for (const r of [r1, r2]) await expect.poll(async () => (await listRelaySessions(r.url)).map((s) => s.id).sort()).toEqual(['call-a', 'call-b']);

    const first = await openSse(`${r1.url}/sessions/call-a/events`);
    cleanup.push(() => first.close());
    await first.waitFor((m) => labels({ messages: m } as SseReader).length === 5);
    await a.step(5);
    await first.waitFor((m) => labels({ messages: m } as SseReader).length === 10);

    r1.child.kill('SIGKILL');
    await r1.exited;
    await first.closed;
    // The session goes on while the page has no relay.
    await a.step(7);
    await b.step(3);

    const cursor = lastId(first);
    const second = await openSse(`${r2.url}/sessions/call-a/events`, { 'last-event-id': cursor });
    cleanup.push(() => second.close());
    expect(second.status).toBe(200);
    await a.step(3);
    a.session.end({ status: 'done' });
    await second.closed;

    expect([...labels(first), ...labels(second)]).toEqual(a.own);
    expect(second.messages.filter((m) => m.event === 'reset' || m.event === 'gap')).toEqual([]);
    expect(second.messages.at(-1)!.event).toBe('end');
  }, 60_000);

  it('redis-server restarts without persistence mid-session: the page gets an explicit reset, then the new stream from its start', async () => {
    const redis = await startRedis();
    cleanup.push(() => redis.stop());
    const prefix = 'fleet';
    const publisher = await createPublisher({ url: redis.url, prefix });
    cleanup.push(() => publisher.close());
    const a = live(publisher, 'call-a');
    const r = await relayProcess(redis, prefix);
    await a.step(6);
    const page = await openSse(`${r.url}/sessions/call-a/events`);
    cleanup.push(() => page.close());
    await page.waitFor((m) => labels({ messages: m } as SseReader).length === 6);

    await redis.restart(); // every key is gone
    await a.step(4);
    a.session.end({ status: 'done' });
    await a.session.settled;
    await page.waitFor((m) => m.some((x) => x.event === 'end'), 20_000);

    const reset = page.messages.findIndex((m) => m.event === 'reset');
    expect(reset).toBeGreaterThan(0);
    expect(JSON.parse(page.messages[reset]!.data)).toMatchObject({ reason: 'lost' });
    expect(page.messages.filter((m) => m.event === 'reset')).toHaveLength(1);
    const before = labels(page).slice(0, labels({ messages: page.messages.slice(0, reset) } as SseReader).length);
    const after = labels(page, reset);
    // Before the reset: the session's first events; after it: the new stream, which ends with
    // the session's last events, in order, each once. What fell between is what the reset says was lost.
    expect(before).toEqual(a.own.slice(0, before.length));
    expect(after.length).toBeGreaterThanOrEqual(4);
    expect(after).toEqual(a.own.slice(a.own.length - after.length));
    expect(a.session.stats.streamsLost).toBe(1);
  }, 60_000);
});
