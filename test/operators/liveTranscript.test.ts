import { map } from 'rxjs';
import { describe, it } from 'vitest';
import { liveTranscript } from 'svc-stream';
import type { OrderedMap, TranscriptEntry } from 'svc-stream';
import { ev } from '../state/fixtures.js';
import { marbles } from './marbles.js';

const show = map((lines: OrderedMap<TranscriptEntry>) => lines.toArray().map((l) => `${l.status}:${l.clip.text}`));

const events = {
  a: ev.partial('A', { text: 'hel' }),
  b: ev.partial('A', { text: 'hello wor' }),
  c: ev.partial('B', { text: 'yes' }),
  d: ev.clip('B', { text: 'yes.' }),
  e: ev.clip('A', { text: 'hello world' }),
  f: ev.update('A', { emotion: 'Happy' }),
  g: ev.partial('A', { text: 'hello w' }),
  h: ev.summary('s'),
};

describe('liveTranscript', () => {
  it('shows partials growing, then final clips, ordered by first appearance', () => {
    marbles(({ cold, expectObservable, expectSubscriptions }) => {
      const source = cold('a-b-c-d-e-f-g-h|', events);
      expectObservable(source.pipe(liveTranscript(), show)).toBe('a-b-c-d-e-f----|', {
        a: ['partial:hel'],
        b: ['partial:hello wor'],
        c: ['partial:hello wor', 'partial:yes'],
        d: ['partial:hello wor', 'final:yes.'],
        e: ['final:hello world', 'final:yes.'],
        f: ['final:hello world', 'final:yes.'],
      });
      expectSubscriptions(source.subscriptions).toBe('^--------------!');
    });
  });

  it('unsubscribes from the source when the subscriber leaves', () => {
    marbles(({ hot, expectObservable, expectSubscriptions }) => {
      const source = hot('-a-b-c-|', events);
      expectObservable(source.pipe(liveTranscript(), show), '^--!').toBe('-a--', { a: ['partial:hel'] });
      expectSubscriptions(source.subscriptions).toBe('^--!');
    });
  });
});
