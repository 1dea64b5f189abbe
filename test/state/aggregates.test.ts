import { describe, expect, it } from 'vitest';
import { aggregatesReducer, initialAggregatesState, sentimentKey, type AggregatesState } from 'svc-stream/state';
import { type ServerEvent } from 'svc-stream';
import { ev } from './fixtures.js';

function view(s: AggregatesState) {
  return {
    topics: s.topics,
    summary: s.summary,
    sentiments: s.topicSentiments.toArray().map((t) => `${t.topic}/${t.speaker_label}=${t.sentiment_score}`),
    audioDurationMs: s.audioDurationMs,
  };
}

type Row = [label: string, event: ServerEvent, expected: ReturnType<typeof view> | 'same'];

const rows: Row[] = [
  ['first topics', ev.topics('billing', 'refund', 'delivery'), { topics: ['billing', 'refund', 'delivery'], summary: null, sentiments: [], audioDurationMs: null }],
  ['the same list again changes nothing', ev.topics('billing', 'refund', 'delivery'), 'same'],
  ['topics shrink: replaced, never merged', ev.topics('refund'), { topics: ['refund'], summary: null, sentiments: [], audioDurationMs: null }],
  ['first summary', ev.summary('Refund asked.'), { topics: ['refund'], summary: 'Refund asked.', sentiments: [], audioDurationMs: null }],
  ['a later summary replaces it', ev.summary('Refund asked and granted.'), { topics: ['refund'], summary: 'Refund asked and granted.', sentiments: [], audioDurationMs: null }],
  ['sentiment refund/1', ev.sentiment('refund', '1', -0.5), { topics: ['refund'], summary: 'Refund asked and granted.', sentiments: ['refund/1=-0.5'], audioDurationMs: null }],
  ['sentiment refund/2', ev.sentiment('refund', '2', 0.1), { topics: ['refund'], summary: 'Refund asked and granted.', sentiments: ['refund/1=-0.5', 'refund/2=0.1'], audioDurationMs: null }],
  ['a later refund/1 supersedes, in place', ev.sentiment('refund', '1', 0.7), { topics: ['refund'], summary: 'Refund asked and granted.', sentiments: ['refund/1=0.7', 'refund/2=0.1'], audioDurationMs: null }],
  ['a sentiment for a topic no longer listed is still kept', ev.sentiment('billing', '2', -1), { topics: ['refund'], summary: 'Refund asked and granted.', sentiments: ['refund/1=0.7', 'refund/2=0.1', 'billing/2=-1'], audioDurationMs: null }],
  ['topics grow again', ev.topics('refund', 'loyalty'), { topics: ['refund', 'loyalty'], summary: 'Refund asked and granted.', sentiments: ['refund/1=0.7', 'refund/2=0.1', 'billing/2=-1'], audioDurationMs: null }],
  ['done carries the audio duration', ev.done(61_500), { topics: ['refund', 'loyalty'], summary: 'Refund asked and granted.', sentiments: ['refund/1=0.7', 'refund/2=0.1', 'billing/2=-1'], audioDurationMs: 61_500 }],
  ['a clip is not an aggregate', ev.clip('a'), 'same'],
];

describe('aggregatesReducer (rule 6 and done), step by step', () => {
  it('applies every row in order', () => {
    let state = initialAggregatesState;
    const history: Array<[AggregatesState, ReturnType<typeof view>]> = [];
    for (const [label, event, expected] of rows) {
      const next = aggregatesReducer(state, event);
      if (expected === 'same') expect(next, label).toBe(state);
      else expect(view(next), label).toEqual(expected);
      state = next;
      history.push([state, view(state)]);
    }
    for (const [s, seen] of history) expect(view(s)).toEqual(seen);
  });

  it('keeps a frozen copy of the topics, not the event array', () => {
    const topics = ['a', 'b'];
    const s = aggregatesReducer(initialAggregatesState, { type: 'topics', topics });
    topics.push('c');
    expect(s.topics).toEqual(['a', 'b']);
    expect(Object.isFrozen(s.topics)).toBe(true);
  });

  it('a null summary replaces a text', () => {
    const s1 = aggregatesReducer(initialAggregatesState, ev.summary('x'));
    const s2 = aggregatesReducer(s1, ev.summary(null));
    expect(s2.summary).toBeNull();
    expect(aggregatesReducer(initialAggregatesState, ev.summary(null))).toBe(initialAggregatesState);
  });

  it('sentimentKey separates topic and speaker', () => {
    expect(sentimentKey('a', 'b')).not.toBe(sentimentKey('a b', ''));
  });
});
