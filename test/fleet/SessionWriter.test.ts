// One session's queue stepped without Redis: entries numbered in their epoch, statuses once
// each, events past the bounds dropped and counted, a lost stream renumbered behind a start
// that says so, and the report it settles with.
import { Subject } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { SvcError } from '../../src/errors.js';
import { freshStats, SessionWriter, type WriterOwner } from '../../src/fleet/SessionWriter.js';
import type { SessionState } from '../../src/schema/sessionState.js';
import { createSessionStats } from '../../src/session/stats.js';

function owner(room = Infinity) {
  let clock = 1000;
  const notes: string[] = [];
  const o: WriterOwner & { notes: string[]; heldEntries: number; tick(): void } = {
    stats: freshStats(),
    notes,
    heldEntries: 0,
    tick: () => void (clock += 5),
    now: () => clock,
    room: () => o.heldEntries < room,
    overflowError: () => new SvcError('redis_unavailable', 'full'),
    held: (entries) => void (o.heldEntries += entries),
    note: (_w, kind, info) => void notes.push(`${kind}:${JSON.stringify(info)}`),
    enqueued: () => undefined,
    ended: () => undefined,
  };
  return o;
}
const event = { type: 'clip', id: 'c1' } as never;

describe('SessionWriter', () => {
  it('numbers entries 1, 2, 3 in its epoch, a status once while unchanged, and notes the directory', () => {
    const o = owner();
    const w = new SessionWriter(o, 'a', 'a.wav', 7);
    w.status('streaming');
    w.status('streaming');
    w.event(event);
    o.tick();
    w.event(event);
    expect(w.queue.map((e) => [e.seq, e.kind, e.ms])).toEqual([[1, 'start', 1000], [2, 'status', 1000], [3, 'event', 1000], [4, 'event', 1005]]);
    expect(w.stats).toMatchObject({ entries: 4, pending: 4 });
    expect(o.notes).toEqual(['start:{"title":"a.wav","startedAt":7,"status":"connecting","events":0}', 'status:{"status":"streaming","events":0}']);
  });

  it('past the bounds only events are dropped, counted and given a reason; the end always waits', async () => {
    const o = owner(2);
    const w = new SessionWriter(o, 'b', 'b', 0);
    w.event(event);
    w.event(event);
    w.end({ status: 'done' });
    expect(w.queue.map((e) => e.kind)).toEqual(['start', 'event', 'end']);
    w.acknowledge(3);
    const report = await w.settled;
    expect(report).toMatchObject({ id: 'b', entries: 4, published: 3, unpublished: 1, pending: 0 });
    expect(report.error?.code).toBe('redis_unavailable');
  });

  it('a lost stream goes on in a new epoch, renumbered from 1 behind a start that says restarted', () => {
    const o = owner();
    const w = new SessionWriter(o, 'c', 'c', 3);
    w.acknowledge(1);
    w.event(event);
    const first = w.epoch;
    w.restart();
    expect(w.epoch).not.toBe(first);
    expect(w.queue.map((e) => [e.seq, e.kind])).toEqual([[1, 'start'], [2, 'event']]);
    expect(JSON.parse(w.queue[0]!.data)).toEqual({ title: 'c', startedAt: 3, restarted: true });
    expect(w.stats.streamsLost).toBe(1);
  });

  it('carries the label of the stats it follows: a status entry before the first event it labels, on every status after, in the directory and a restarted start', () => {
    const o = owner();
    const w = new SessionWriter(o, 'e', 'e', 0);
    const stats = createSessionStats();
    w.follow(stats.state$);
    const label = { source: 'emulator', note: 'speech segments only' } as const;
    stats.label = label;
    w.event(event);
    w.status('finishing');
    expect(w.queue.map((e) => `${e.kind}:${e.data}`).slice(1)).toEqual([
      'status:{"status":"connecting"}',
      `status:{"status":"connecting","label":${JSON.stringify(label)}}`,
      'event:{"type":"clip","id":"c1"}',
      `status:{"status":"finishing","label":${JSON.stringify(label)}}`,
    ]);
    expect(o.notes.at(-1)).toBe(`status:{"status":"finishing","label":${JSON.stringify(label)},"events":1}`);
    w.restart();
    expect(JSON.parse(w.queue[0]!.data)).toMatchObject({ restarted: true, label });
  });

  it('follows a state stream (paused is still streaming); abandoned, every later entry is unpublished', async () => {
    const o = owner();
    const w = new SessionWriter(o, 'd', 'd', 0);
    const state$ = new Subject<SessionState>();
    w.follow(state$);
    state$.next({ status: 'streaming' } as SessionState);
    state$.next({ status: 'paused' } as SessionState);
    state$.next({ status: 'closing' } as SessionState);
    expect(w.queue.filter((e) => e.kind === 'status').map((e) => e.data)).toEqual(['{"status":"streaming"}']);
    w.abandon(new SvcError('redis_unavailable', 'gone'));
    w.event(event);
    w.end({ status: 'done' });
    const report = await w.settled;
    expect(report).toMatchObject({ published: 0, unpublished: 4, pending: 0 });
    expect(o.stats.unpublished).toBe(4);
  });
});
