import { map } from 'rxjs';
import { describe, it } from 'vitest';
import { topicSentiments } from 'svc-stream';
import type { OrderedMap, TopicSentiment } from 'svc-stream';
import { ev } from '../state/fixtures.js';
import { marbles } from './marbles.js';

const show = map((s: OrderedMap<TopicSentiment>) => s.toArray().map((t) => `${t.topic}/${t.speaker_label}=${t.sentiment_score}`));

const events = {
  a: ev.sentiment('refund', '1', -0.6),
  b: ev.sentiment('refund', '2', 0.1),
  c: ev.sentiment('refund', '1', 0.4),
  t: ev.topics('billing'),
};

describe('topicSentiments', () => {
  it('keys by topic and speaker; a later one supersedes in place', () => {
    marbles(({ cold, expectObservable, expectSubscriptions }) => {
      const source = cold('a-b-t-c|', events);
      expectObservable(source.pipe(topicSentiments(), show)).toBe('a-b---c|', {
        a: ['refund/1=-0.6'],
        b: ['refund/1=-0.6', 'refund/2=0.1'],
        c: ['refund/1=0.4', 'refund/2=0.1'],
      });
      expectSubscriptions(source.subscriptions).toBe('^------!');
    });
  });

  it('unsubscribes from the source when the subscriber leaves', () => {
    marbles(({ hot, expectObservable, expectSubscriptions }) => {
      const source = hot('-a--b--|', events);
      expectObservable(source.pipe(topicSentiments(), show), '^--!').toBe('-a--', { a: ['refund/1=-0.6'] });
      expectSubscriptions(source.subscriptions).toBe('^--!');
    });
  });
});
