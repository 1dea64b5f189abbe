// One session's queue stepped without Redis: entries numbered in their epoch, statuses once
// each, events past the bounds dropped and counted, a lost stream renumbered behind a start
// that says so (and counted as made), what was sent without an answer told from what was never
// sent, and the report it settles with: every entry in exactly one count.
import { Subject } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { SvcError } from '../../src/errors/index.js';
import { freshStats, SessionWriter, type WriterOwner } from '../../src/fleet/SessionWriter.js';
import type { SessionState } from '../../src/schema/sessionState.js';
import { countersOf, createSessionStats } from '../../src/session/stats.js';

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
    progressed: () => undefined,
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
    expect(report).toMatchObject({ id: 'b', entries: 4, published: 3, notPublished: 1, unconfirmed: 0, pending: 0 });
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
    // As the session (the stats' one writer) learns it.
    countersOf(stats).label = label;
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
    expect(report).toMatchObject({ published: 0, notPublished: 4, pending: 0 });
    expect(o.stats.notPublished).toBe(4);
  });

  it('a lost stream: the new start is an entry made, so published never exceeds entries', async () => {
    const o = owner();
    const w = new SessionWriter(o, 'e', 'e', 0);
    w.event(event);
    w.batch();
    w.acknowledge(2);
    w.event(event);
    w.batch();
    w.restart();
    w.end({ status: 'done' });
    w.batch();
    w.acknowledge(3);
    const report = await w.settled;
    expect(report).toMatchObject({ entries: 5, published: 5, notPublished: 0, unconfirmed: 0, streamsLost: 1 });
    expect(o.stats).toMatchObject({ entries: 5, published: 5 });
  });

  it('given up at close: the entries of an unanswered command are unconfirmed, the rest not published', async () => {
    const table: Array<[string, (w: SessionWriter) => void, { unconfirmed: number; notPublished: number; published: number }]> = [
      // a batch in flight when the deadline came (the end, made after it, never left)
      ['in flight', (w) => void w.batch(), { unconfirmed: 4, notPublished: 1, published: 0 }],
      // a batch that timed out, then more entries that were never sent
      ['timed out, more made', (w) => (w.batch(), w.unanswered(), w.event(event), w.event(event)), { unconfirmed: 4, notPublished: 3, published: 0 }],
      // a batch that never left the process
      ['never sent', (w) => (w.batch(), w.unsent()), { unconfirmed: 0, notPublished: 5, published: 0 }],
      // an answer says the first two are stored, so nothing else is in doubt
      ['timed out, then answered in part', (w) => (w.batch(), w.unanswered(), w.batch(), w.acknowledge(2)), { unconfirmed: 0, notPublished: 3, published: 2 }],
      // the stream was lost: nothing of the old epoch can be stored any more
      ['timed out, then lost', (w) => (w.batch(), w.unanswered(), w.restart()), { unconfirmed: 0, notPublished: 6, published: 0 }],
    ];
    for (const [name, step, want] of table) {
      const o = owner();
      const w = new SessionWriter(o, name.replace(/\W/g, '-'), 'x', 0);
      for (let i = 0; i < 3; i++) w.event(event);
      step(w);
      // As close() does: the end is made, then what is left is given up.
      w.end({ status: 'closed' });
      w.abandon(new SvcError('redis_unavailable', 'closed'));
      const r = await w.settled;
      expect({ name, unconfirmed: r.unconfirmed, notPublished: r.notPublished, published: r.published }).toEqual({ name, ...want });
      expect(r.published + r.notPublished + r.unconfirmed + r.pending).toBe(r.entries);
    }
  });

  it('counts the outages of its own run, not those after it settled', async () => {
    const o = owner();
    const w = new SessionWriter(o, 'f', 'f', 0);
    w.outageBegan();
    w.batch();
    w.acknowledge(1);
    w.end({ status: 'done' });
    w.batch();
    w.acknowledge(1);
    w.outageBegan();
    expect((await w.settled).outages).toBe(1);
    expect(o.stats.outages).toBe(0);
  });
});
