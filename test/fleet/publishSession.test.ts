// publishSession against a real redis-server: the session's events pass through unchanged and
// in step, its statuses come through the hook, and its end is `done`, `failed` (code and first
// line) or `closed` (unsubscribed); a shared publisher stays open, an own one closes after.
import { BehaviorSubject, lastValueFrom, NEVER, of, Subject, throwError, toArray } from 'rxjs';
import type { SessionState } from '../../src/schema/sessionState.js';
import { describe, expect, it } from 'vitest';
import { SessionError } from '../../src/errors/index.js';
import { createPublisher } from '../../src/fleet/publisher.js';
import { publishSession } from '../../src/fleet/publishSession.js';
import type { PublishReport } from '../../src/publishing.js';
import type { ServerEvent } from '../../src/schema/events.js';
import { useRedis } from './redisFixture.js';

const fixture = useRedis();

let n = 0;
const topics = (i: number): ServerEvent => ({ type: 'topics', topics: [`t${i}`] });
const stored = (prefix: string, id: string) => fixture.stored(id, prefix);
const reported = (): { reports: PublishReport[]; onReport: (r: PublishReport) => void } => {
  const reports: PublishReport[] = [];
  return { reports, onReport: (r) => reports.push(r) };
};

describe('publishSession', () => {
  it('passes every event through in step, publishes the statuses the hook is given, and ends done', async () => {
    const prefix = `s${n++}`;
    const source = new Subject<ServerEvent>();
    const seen: string[] = [];
    const { reports, onReport } = reported();
    // The session's life cycle, as its stats.state$ gives it (replays the current state).
    const state$ = new BehaviorSubject<SessionState>({ status: 'connecting' });
    const out = publishSession(source, { url: fixture.server.url, prefix, id: 'p1', title: 'p1.wav', state$, onReport }).subscribe({
      next: (e) => seen.push(e.type === 'topics' ? e.topics[0]! : e.type),
    });
    state$.next({ status: 'streaming' });
    source.next(topics(1));
    expect(seen).toEqual(['t1']); // synchronously: publishing is queued, never awaited
    source.next(topics(2));
    source.complete();
    await expect.poll(() => reports.length, { timeout: 10_000 }).toBe(1);
    expect(reports[0]).toMatchObject({ id: 'p1', entries: 6, published: 6, notPublished: 0 });
    const entries = await stored(prefix, 'p1');
    expect(entries.map((e) => e.kind)).toEqual(['start', 'status', 'status', 'event', 'event', 'end']);
    expect(entries.filter((e) => e.kind === 'status').map((e) => JSON.parse(e.data).status)).toEqual(['connecting', 'streaming']);
    expect(JSON.parse(entries[0]!.data)).toMatchObject({ title: 'p1.wav' });
    expect(JSON.parse(entries.at(-1)!.data)).toEqual({ status: 'done' });
    out.unsubscribe();
  });

  it('an error passes through, and the end says failed with its code and first line', async () => {
    const prefix = `s${n++}`;
    const publisher = await createPublisher({ url: fixture.server.url, prefix });
    const { reports, onReport } = reported();
    const err = new SessionError('connection_lost', 'the socket closed\nsecond line');
    await expect(lastValueFrom(publishSession(throwError(() => err), { publisher, id: 'p2', onReport }))).rejects.toBe(err);
    await expect.poll(() => reports.length, { timeout: 10_000 }).toBe(1);
    expect(JSON.parse((await stored(prefix, 'p2')).at(-1)!.data)).toEqual({ status: 'failed', error: { code: 'connection_lost', message: 'the socket closed' } });
    // The shared publisher is still open: another session goes on it.
    expect(await lastValueFrom(publishSession(of(topics(1)), { publisher, id: 'p3' }).pipe(toArray()))).toHaveLength(1);
    expect((await publisher.close()).notPublished).toBe(0);
  });

  it('unsubscribing ends it closed', async () => {
    const prefix = `s${n++}`;
    const { reports, onReport } = reported();
    const sub = publishSession(NEVER, { url: fixture.server.url, prefix, id: 'p4', onReport }).subscribe();
    sub.unsubscribe();
    await expect.poll(() => reports.length, { timeout: 10_000 }).toBe(1);
    expect(JSON.parse((await stored(prefix, 'p4')).at(-1)!.data)).toEqual({ status: 'closed' });
  });
});
