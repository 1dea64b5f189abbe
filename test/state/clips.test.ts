import { describe, expect, it } from 'vitest';
import { clipsReducer, createClipsState, initialClipsState, type ClipsState } from 'svc-stream/state';
import { type ServerEvent } from 'svc-stream';
import { ev } from './fixtures.js';

/** What a test compares: plain data, so one table row reads as the expected state. */
function view(s: ClipsState) {
  return {
    clips: s.clips.toArray().map((c) => ({ ...c })),
    transcript: s.transcript.toArray().map((e) => `${e.status}:${e.clip.clip_uuid}:${e.clip.text ?? ''}`),
    pending: Object.fromEntries([...s.pendingUpdates].map(([id, us]) => [id, us.length])),
    orphanUpdates: s.orphanUpdates,
    stalePartials: s.stalePartials,
  };
}

type Row = [label: string, event: ServerEvent, expected: ReturnType<typeof view> | 'same'];

const rows: Row[] = [
  ['first partial of a', ev.partial('a', { text: 'he', end_ms: null }), {
    clips: [], transcript: ['partial:a:he'], pending: {}, orphanUpdates: 0, stalePartials: 0 }],
  ['partial a grows under the same uuid', ev.partial('a', { text: 'hello', end_ms: 500 }), {
    clips: [], transcript: ['partial:a:hello'], pending: {}, orphanUpdates: 0, stalePartials: 0 }],
  ['a repeated partial with no new value changes nothing', ev.partial('a', { text: 'hello' }), 'same'],
  ['partial of b after a', ev.partial('b', { text: 'ok' }), {
    clips: [], transcript: ['partial:a:hello', 'partial:b:ok'], pending: {}, orphanUpdates: 0, stalePartials: 0 }],
  ['b is final first: clips by clip arrival, transcript by first appearance', ev.clip('b', { text: 'okay', emotion: null }), {
    clips: [{ clip_uuid: 'b', text: 'okay', emotion: null }],
    transcript: ['partial:a:hello', 'final:b:okay'], pending: {}, orphanUpdates: 0, stalePartials: 0 }],
  ['final a replaces its partials wholesale (no end_ms carried over)', ev.clip('a', { text: 'hello there', emotion: null, accent: null }), {
    clips: [{ clip_uuid: 'b', text: 'okay', emotion: null }, { clip_uuid: 'a', text: 'hello there', emotion: null, accent: null }],
    transcript: ['final:a:hello there', 'final:b:okay'], pending: {}, orphanUpdates: 0, stalePartials: 0 }],
  ['update a: emotion', ev.update('a', { emotion: 'Happy' }), {
    clips: [{ clip_uuid: 'b', text: 'okay', emotion: null }, { clip_uuid: 'a', text: 'hello there', emotion: 'Happy', accent: null }],
    transcript: ['final:a:hello there', 'final:b:okay'], pending: {}, orphanUpdates: 0, stalePartials: 0 }],
  ['update b interleaved: accent', ev.update('b', { accent: 'Scottish' }), {
    clips: [{ clip_uuid: 'b', text: 'okay', emotion: null, accent: 'Scottish' }, { clip_uuid: 'a', text: 'hello there', emotion: 'Happy', accent: null }],
    transcript: ['final:a:hello there', 'final:b:okay'], pending: {}, orphanUpdates: 0, stalePartials: 0 }],
  ['update a: accent only, the absent emotion keeps its value', ev.update('a', { accent: 'Irish' }), {
    clips: [{ clip_uuid: 'b', text: 'okay', emotion: null, accent: 'Scottish' }, { clip_uuid: 'a', text: 'hello there', emotion: 'Happy', accent: 'Irish' }],
    transcript: ['final:a:hello there', 'final:b:okay'], pending: {}, orphanUpdates: 0, stalePartials: 0 }],
  ['update a: a later emotion supersedes', ev.update('a', { emotion: 'Surprised' }), {
    clips: [{ clip_uuid: 'b', text: 'okay', emotion: null, accent: 'Scottish' }, { clip_uuid: 'a', text: 'hello there', emotion: 'Surprised', accent: 'Irish' }],
    transcript: ['final:a:hello there', 'final:b:okay'], pending: {}, orphanUpdates: 0, stalePartials: 0 }],
  ['update a: null means refinement unavailable, the value stays', ev.update('a', { emotion: null }), 'same'],
  ['update a: the same value again changes nothing', ev.update('a', { accent: 'Irish' }), 'same'],
  ['update for unknown clip c is held, counted, not dropped', ev.update('c', { emotion: 'Sad' }), {
    clips: [{ clip_uuid: 'b', text: 'okay', emotion: null, accent: 'Scottish' }, { clip_uuid: 'a', text: 'hello there', emotion: 'Surprised', accent: 'Irish' }],
    transcript: ['final:a:hello there', 'final:b:okay'], pending: { c: 1 }, orphanUpdates: 1, stalePartials: 0 }],
  ['a partial of c does not release the held updates', ev.partial('c', { text: 'bye' }), {
    clips: [{ clip_uuid: 'b', text: 'okay', emotion: null, accent: 'Scottish' }, { clip_uuid: 'a', text: 'hello there', emotion: 'Surprised', accent: 'Irish' }],
    transcript: ['final:a:hello there', 'final:b:okay', 'partial:c:bye'], pending: { c: 1 }, orphanUpdates: 1, stalePartials: 0 }],
  ['a second held update for c', ev.update('c', { emotion: 'Angry', accent: 'Welsh' }), {
    clips: [{ clip_uuid: 'b', text: 'okay', emotion: null, accent: 'Scottish' }, { clip_uuid: 'a', text: 'hello there', emotion: 'Surprised', accent: 'Irish' }],
    transcript: ['final:a:hello there', 'final:b:okay', 'partial:c:bye'], pending: { c: 2 }, orphanUpdates: 2, stalePartials: 0 }],
  ['clip c arrives: held updates applied in arrival order', ev.clip('c', { text: 'bye now', emotion: 'Neutral' }), {
    clips: [
      { clip_uuid: 'b', text: 'okay', emotion: null, accent: 'Scottish' },
      { clip_uuid: 'a', text: 'hello there', emotion: 'Surprised', accent: 'Irish' },
      { clip_uuid: 'c', text: 'bye now', emotion: 'Angry', accent: 'Welsh' },
    ],
    transcript: ['final:a:hello there', 'final:b:okay', 'final:c:bye now'], pending: {}, orphanUpdates: 2, stalePartials: 0 }],
  ['a partial after the final clip is not applied, and is counted', ev.partial('a', { text: 'hel' }), {
    clips: [
      { clip_uuid: 'b', text: 'okay', emotion: null, accent: 'Scottish' },
      { clip_uuid: 'a', text: 'hello there', emotion: 'Surprised', accent: 'Irish' },
      { clip_uuid: 'c', text: 'bye now', emotion: 'Angry', accent: 'Welsh' },
    ],
    transcript: ['final:a:hello there', 'final:b:okay', 'final:c:bye now'], pending: {}, orphanUpdates: 2, stalePartials: 1 }],
  ['an event of another family returns the same state', ev.topics('x'), 'same'],
  ['an unknown event returns the same state', ev.unknown('future_event'), 'same'],
];

/** `clipsReducer(state, event)` and how many `Map` lookups it made (the key-to-slot indexes). */
function reduceCountingLookups(state: ClipsState, event: ServerEvent): [ClipsState, number] {
  const get = Map.prototype.get;
  let count = 0;
  Map.prototype.get = function (this: Map<unknown, unknown>, key: unknown) {
    count++;
    return get.call(this, key);
  };
  try {
    return [clipsReducer(state, event), count];
  } finally {
    Map.prototype.get = get;
  }
}

describe('clipsReducer (rules 1-2), step by step', () => {
  it('applies every row in order', () => {
    let state = initialClipsState;
    const history: Array<[ClipsState, ReturnType<typeof view>]> = [];
    for (const [label, event, expected] of rows) {
      const next = clipsReducer(state, event);
      if (expected === 'same') {
        expect(next, label).toBe(state);
      } else {
        expect(next, label).not.toBe(state);
        expect(view(next), label).toEqual(expected);
      }
      state = next;
      history.push([state, view(state)]);
    }
    // Purity: no later step changed any earlier state.
    for (const [s, seen] of history) expect(view(s)).toEqual(seen);
  });

  it('leaves the initial state untouched', () => {
    clipsReducer(initialClipsState, ev.clip('z'));
    expect(initialClipsState.clips.size).toBe(0);
    expect(initialClipsState.transcript.size).toBe(0);
  });

  it('keeps unknown extra update fields as refinements too', () => {
    let s = clipsReducer(initialClipsState, ev.clip('a', { deepfake_score: 0.1 }));
    s = clipsReducer(s, ev.update('a', { deepfake_score: 0.7 }));
    expect(s.clips.get('a')).toEqual({ clip_uuid: 'a', deepfake_score: 0.7 });
  });

  it('bounds early updates by maxPendingUpdates, dropping the oldest and counting it', () => {
    let s = createClipsState({ maxPendingUpdates: 2 });
    for (const e of [ev.update('a', { accent: 'x' }), ev.update('b', { accent: 'y' }), ev.update('c', { accent: 'z' })]) s = clipsReducer(s, e);
    expect([...s.pendingUpdates.keys()]).toEqual(['b', 'c']);
    expect(s.pendingUpdates.updateCount).toBe(2);
    expect(s.orphanUpdates).toBe(3);
    expect(s.droppedUpdates).toBe(1);
    s = clipsReducer(s, ev.clip('a'));
    s = clipsReducer(s, ev.clip('b'));
    expect(s.clips.get('a')).toEqual({ clip_uuid: 'a' });
    expect(s.clips.get('b')).toEqual({ clip_uuid: 'b', accent: 'y' });
    expect(s.pendingUpdates.size).toBe(1);
  });

  it('holds 10,000 early updates by default and counts none dropped in a session that keeps rule 2', () => {
    expect(initialClipsState.pendingUpdates.capacity).toBe(10_000);
    expect(initialClipsState.droppedUpdates).toBe(0);
    expect(() => createClipsState({ maxPendingUpdates: -1 })).toThrow(RangeError);
  });

  it('looks the key up once for an update to a final clip (both maps written by position)', () => {
    // Partials of 'c' before 'b': the two maps then disagree on positions. 'd' comes last, so
    // neither 'a' nor 'b' is the newest key (which is compared before any lookup).
    let s = initialClipsState;
    for (const e of [ev.partial('a'), ev.clip('a'), ev.partial('c'), ev.partial('b'), ev.clip('b'), ev.clip('c'), ev.partial('d'), ev.clip('d')]) s = clipsReducer(s, e);
    const lookups = (event: ServerEvent): [ClipsState, number] => reduceCountingLookups(s, event);
    const [same, sameLookups] = lookups(ev.update('a', { accent: 'x' }));
    expect(sameLookups).toBe(1);
    expect(same.transcript.get('a')).toEqual({ status: 'final', clip: { clip_uuid: 'a', accent: 'x' } });
    // 'b' is second in clips, third in the transcript: the slot's key differs, so one more lookup.
    const [moved, movedLookups] = lookups(ev.update('b', { accent: 'y' }));
    expect(movedLookups).toBe(2);
    expect(moved.transcript.get('b')).toEqual({ status: 'final', clip: { clip_uuid: 'b', accent: 'y' } });
    expect(moved.transcript.get('c')).toEqual({ status: 'final', clip: { clip_uuid: 'c' } });
    expect([...moved.transcript.keys()]).toEqual(['a', 'c', 'b', 'd']);
    // The newest clip: its partials and its final clip are found without any lookup.
    const [newest, newestLookups] = lookups(ev.update('d', { accent: 'z' }));
    expect(newestLookups).toBe(0);
    expect(newest.clips.get('d')).toEqual({ clip_uuid: 'd', accent: 'z' });
    const [, partialLookups] = lookups(ev.partial('e'));
    expect(partialLookups).toBe(1); // a new key: the index must say it is absent
  });

  it('finds the newest key without an index lookup: a partial after a partial of the same clip, its final clip', () => {
    let s = clipsReducer(clipsReducer(initialClipsState, ev.partial('a')), ev.partial('b'));
    let count: number;
    [s, count] = reduceCountingLookups(s, { type: 'partial_clip', partial_clip: { clip_uuid: 'b', text: 'more' } } as ServerEvent);
    expect(count).toBe(0);
    expect(s.transcript.get('b')).toEqual({ status: 'partial', clip: { clip_uuid: 'b', text: 'more' } });
    expect([...s.transcript.keys()]).toEqual(['a', 'b']);
    [s, count] = reduceCountingLookups(s, ev.clip('b'));
    expect(count).toBe(0); // the first final clip, and 'b' is the transcript's newest key
    expect(s.transcript.get('b')?.status).toBe('final');
  });
});
