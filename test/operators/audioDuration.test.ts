import { describe, it } from 'vitest';
import { audioDuration } from 'svc-stream';
import { ev } from '../state/fixtures.js';
import { marbles } from './marbles.js';

const events = { c: ev.clip('a'), s: ev.summary('x'), d: ev.done(61_500) };

describe('audioDuration', () => {
  it('emits the duration of done, once', () => {
    marbles(({ cold, expectObservable, expectSubscriptions }) => {
      const source = cold('c-s-d|', events);
      expectObservable(source.pipe(audioDuration())).toBe('----d|', { d: 61_500 });
      expectSubscriptions(source.subscriptions).toBe('^----!');
    });
  });

  it('emits nothing when the session fails before done, and forwards the error', () => {
    marbles(({ cold, expectObservable }) => {
      const failure = new Error('closed 1011');
      const source = cold('c-s-#', events, failure);
      expectObservable(source.pipe(audioDuration())).toBe('----#', undefined, failure);
    });
  });

  it('unsubscribes from the source when the subscriber leaves', () => {
    marbles(({ hot, expectObservable, expectSubscriptions }) => {
      const source = hot('-c--d--|', events);
      expectObservable(source.pipe(audioDuration()), '^--!').toBe('----');
      expectSubscriptions(source.subscriptions).toBe('^--!');
    });
  });
});
