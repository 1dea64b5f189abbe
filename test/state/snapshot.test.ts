import { describe, expect, it } from 'vitest';
import { initialConversationSnapshot, snapshotReducer } from 'svc-stream/state';
import { type ServerEvent, type ConversationSnapshot } from 'svc-stream';
import { ev } from './fixtures.js';

function view(s: ConversationSnapshot) {
  return {
    clips: s.clips.clips.toArray().map((c) => `${c.clip_uuid}:${c.emotion ?? '-'}`),
    transcript: s.clips.transcript.size,
    type: s.conversation.type?.conversation_type_uuid ?? null,
    roles: [...s.conversation.roles.keys()],
    behaviors: s.behaviors.detections.size,
    topics: s.aggregates.topics,
    summary: s.aggregates.summary,
    sentiments: s.aggregates.topicSentiments.size,
    audioDurationMs: s.aggregates.audioDurationMs,
    error: s.error,
    unknownEvents: s.unknownEvents,
  };
}

const base = view(initialConversationSnapshot);
type Row = [label: string, event: ServerEvent, expected: Partial<ReturnType<typeof view>> | 'same'];

const rows: Row[] = [
  ['a partial', ev.partial('a', { text: 'h' }), { transcript: 1 }],
  ['a behavior while the utterance is in progress, before any type or role', ev.behavior('greet', '1'), { transcript: 1, behaviors: 1 }],
  ['a role', ev.role('1', 'Agent'), { transcript: 1, behaviors: 1, roles: ['1'] }],
  ['the first type discards the role, keeps the behavior', ev.type('support'), { transcript: 1, behaviors: 1, type: 'support' }],
  ['the final clip', ev.clip('a', { emotion: null }), { clips: ['a:-'], transcript: 1, behaviors: 1, type: 'support' }],
  ['its update', ev.update('a', { emotion: 'Happy' }), { clips: ['a:Happy'], transcript: 1, behaviors: 1, type: 'support' }],
  ['topics', ev.topics('refund'), { clips: ['a:Happy'], transcript: 1, behaviors: 1, type: 'support', topics: ['refund'] }],
  ['the same topics: no change at all', ev.topics('refund'), 'same'],
  ['a sentiment', ev.sentiment('refund', '1', 0.2), { clips: ['a:Happy'], transcript: 1, behaviors: 1, type: 'support', topics: ['refund'], sentiments: 1 }],
  ['a summary', ev.summary('ok'), { clips: ['a:Happy'], transcript: 1, behaviors: 1, type: 'support', topics: ['refund'], sentiments: 1, summary: 'ok' }],
  ['an unknown event is counted', ev.unknown('future'), { clips: ['a:Happy'], transcript: 1, behaviors: 1, type: 'support', topics: ['refund'], sentiments: 1, summary: 'ok', unknownEvents: 1 }],
  ['done', ev.done(900), { clips: ['a:Happy'], transcript: 1, behaviors: 1, type: 'support', topics: ['refund'], sentiments: 1, summary: 'ok', unknownEvents: 1, audioDurationMs: 900 }],
  ['an error event is recorded', ev.error('Internal server error'), { clips: ['a:Happy'], transcript: 1, behaviors: 1, type: 'support', topics: ['refund'], sentiments: 1, summary: 'ok', unknownEvents: 1, audioDurationMs: 900, error: 'Internal server error' }],
];

describe('snapshotReducer (all rule families), step by step', () => {
  it('applies every row in order', () => {
    let state = initialConversationSnapshot;
    for (const [label, event, expected] of rows) {
      const next = snapshotReducer(state, event);
      if (expected === 'same') expect(next, label).toBe(state);
      else expect(view(next), label).toEqual({ ...base, ...expected });
      state = next;
    }
  });

  it('keeps every untouched part by reference', () => {
    const s1 = snapshotReducer(initialConversationSnapshot, ev.clip('a'));
    const s2 = snapshotReducer(s1, ev.role('1', 'Agent'));
    expect(s2.clips).toBe(s1.clips);
    expect(s2.behaviors).toBe(s1.behaviors);
    expect(s2.aggregates).toBe(s1.aggregates);
    expect(s2.conversation).not.toBe(s1.conversation);
  });
});
