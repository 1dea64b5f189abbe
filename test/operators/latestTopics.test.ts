import { describe, it } from 'vitest';
import { latestTopics } from 'svc-stream';
import { ev } from '../state/fixtures.js';
import { marbles } from './marbles.js';

const events = {
  a: ev.topics('billing', 'refund', 'delivery'),
  b: ev.topics('billing', 'refund', 'delivery'),
  c: ev.topics('refund'),
  d: ev.topics(),
  x: ev.summary('s'),
};

describe('latestTopics', () => {
  it('replaces the list, never merges: topics may shrink, even to none; a repeated list is not re-emitted', () => {
    marbles(({ cold, expectObservable, expectSubscriptions }) => {
      const source = cold('x-a-b-c-d|', events);
      expectObservable(source.pipe(latestTopics())).toBe('--a---c-d|', {
        a: ['billing', 'refund', 'delivery'],
        c: ['refund'],
        d: [],
      });
      expectSubscriptions(source.subscriptions).toBe('^--------!');
    });
  });

  it('unsubscribes from the source when the subscriber leaves', () => {
    marbles(({ hot, expectObservable, expectSubscriptions }) => {
      const source = hot('-a--c--|', events);
      expectObservable(source.pipe(latestTopics()), '^--!').toBe('-a--', { a: ['billing', 'refund', 'delivery'] });
      expectSubscriptions(source.subscriptions).toBe('^--!');
    });
  });
});
