import { describe, it } from 'vitest';
import { latestSummary } from 'svc-stream';
import { ev } from '../state/fixtures.js';
import { marbles } from './marbles.js';

const events = {
  a: ev.summary('Refund asked.'),
  b: ev.summary('Refund asked and granted.'),
  c: ev.summary('Refund asked and granted.'),
  n: ev.summary(null),
  t: ev.topics('x'),
};

describe('latestSummary', () => {
  it('each summary replaces the previous; a repeat is not re-emitted', () => {
    marbles(({ cold, expectObservable, expectSubscriptions }) => {
      const source = cold('t-a-b-c-n|', events);
      expectObservable(source.pipe(latestSummary())).toBe('--a-b---n|', {
        a: 'Refund asked.',
        b: 'Refund asked and granted.',
        n: null,
      });
      expectSubscriptions(source.subscriptions).toBe('^--------!');
    });
  });

  it('unsubscribes from the source when the subscriber leaves', () => {
    marbles(({ hot, expectObservable, expectSubscriptions }) => {
      const source = hot('-a--b--|', events);
      expectObservable(source.pipe(latestSummary()), '^--!').toBe('-a--', { a: 'Refund asked.' });
      expectSubscriptions(source.subscriptions).toBe('^--!');
    });
  });
});
