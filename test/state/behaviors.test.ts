import { describe, expect, it } from 'vitest';
import { behaviorKey, behaviorsReducer, initialBehaviorsState, type BehaviorsState } from 'svc-stream/state';
import { type ServerEvent } from 'svc-stream';
import { ev } from './fixtures.js';

function view(s: BehaviorsState) {
  return {
    detections: s.detections.toArray().map((d) => `${d.behavior_uuid}/${d.speaker_label ?? '-'}${d.confidence != null ? `@${d.confidence}` : ''}`),
    duplicates: s.duplicates,
  };
}

type Row = [label: string, event: ServerEvent, expected: ReturnType<typeof view> | 'same'];

const rows: Row[] = [
  ['a detection before any type or role', ev.behavior('greet', '1', { confidence: 0.8 }), { detections: ['greet/1@0.8'], duplicates: 0 }],
  ['the same behavior for another speaker', ev.behavior('greet', '2'), { detections: ['greet/1@0.8', 'greet/2'], duplicates: 0 }],
  ['a repeat for (greet, 1) is not applied and is counted', ev.behavior('greet', '1', { confidence: 0.3 }), { detections: ['greet/1@0.8', 'greet/2'], duplicates: 1 }],
  ['a type pick leaves detections alone', ev.type('support'), 'same'],
  ['a role pick leaves detections alone', ev.role('1', 'Agent'), 'same'],
  ['a type change leaves detections alone', ev.type('sales'), 'same'],
  ['a conversation-level detection (no speaker) is its own key', ev.behavior('greet', null), { detections: ['greet/1@0.8', 'greet/2', 'greet/-'], duplicates: 1 }],
  ['a detection after the end of audio, before done, is applied', ev.behavior('escalate', '2'), { detections: ['greet/1@0.8', 'greet/2', 'greet/-', 'escalate/2'], duplicates: 1 }],
  ['done does not touch detections', ev.done(60_000), 'same'],
];

describe('behaviorsReducer (rule 5), step by step', () => {
  it('applies every row in order', () => {
    let state = initialBehaviorsState;
    const history: Array<[BehaviorsState, ReturnType<typeof view>]> = [];
    for (const [label, event, expected] of rows) {
      const next = behaviorsReducer(state, event);
      if (expected === 'same') expect(next, label).toBe(state);
      else expect(view(next), label).toEqual(expected);
      state = next;
      history.push([state, view(state)]);
    }
    for (const [s, seen] of history) expect(view(s)).toEqual(seen);
  });

  it('a duplicate keeps the detections map itself, so nothing downstream re-emits', () => {
    const s1 = behaviorsReducer(initialBehaviorsState, ev.behavior('greet', '1'));
    const s2 = behaviorsReducer(s1, ev.behavior('greet', '1'));
    expect(s2.detections).toBe(s1.detections);
    expect(s2.duplicates).toBe(1);
  });

  it('behaviorKey tells a null speaker from every label, including ""', () => {
    const keys = new Set([behaviorKey('b', null), behaviorKey('b', undefined), behaviorKey('b', ''), behaviorKey('b', '1')]);
    expect(keys.size).toBe(3);
    expect(behaviorKey('b', null)).toBe(behaviorKey('b', undefined));
  });
});
