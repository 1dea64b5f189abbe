import { map } from 'rxjs';
import { describe, it } from 'vitest';
import { clipsWithUpdates } from 'svc-stream';
import type { OrderedMap, Clip } from 'svc-stream';
import { ev } from '../state/fixtures.js';
import { marbles } from './marbles.js';

const show = map((clips: OrderedMap<Clip>) => clips.toArray().map((c) => `${c.clip_uuid}:${c.emotion ?? '-'}:${c.accent ?? '-'}`));

const events = {
  x: ev.clip('x', { emotion: null, accent: null }),
  y: ev.clip('y', { emotion: 'Neutral', accent: null }),
  p: ev.partial('z', { text: 'in progress' }),
  u: ev.update('x', { emotion: 'Happy' }),
  v: ev.update('y', { accent: 'Irish' }),
  w: ev.update('x', { accent: 'Welsh' }),
  n: ev.update('x', { emotion: null }),
  o: ev.update('q', { emotion: 'Sad' }),
  q: ev.clip('q', { emotion: null }),
  t: ev.topics('a'),
};

describe('clipsWithUpdates', () => {
  it('applies updates interleaved across clips, each to its own clip, field by field', () => {
    marbles(({ cold, expectObservable, expectSubscriptions }) => {
      const source = cold('x-y-p-u-v-w-n-t|', events);
      expectObservable(source.pipe(clipsWithUpdates(), show)).toBe('a-b---c-d-e----|', {
        a: ['x:-:-'],
        b: ['x:-:-', 'y:Neutral:-'],
        c: ['x:Happy:-', 'y:Neutral:-'],
        d: ['x:Happy:-', 'y:Neutral:Irish'],
        e: ['x:Happy:Welsh', 'y:Neutral:Irish'],
      });
      expectSubscriptions(source.subscriptions).toBe('^--------------!');
    });
  });

  it('holds an update that arrives before its clip and applies it when the clip arrives', () => {
    marbles(({ cold, expectObservable }) => {
      const source = cold('o-q|', events);
      expectObservable(source.pipe(clipsWithUpdates(), show)).toBe('--a|', { a: ['q:Sad:-'] });
    });
  });

  it('unsubscribes from the source when the subscriber leaves', () => {
    marbles(({ hot, expectObservable, expectSubscriptions }) => {
      const source = hot('--x--u--w--|', events);
      expectObservable(source.pipe(clipsWithUpdates(), show), '^-------!').toBe('--a--b---', {
        a: ['x:-:-'],
        b: ['x:Happy:-'],
      });
      expectSubscriptions(source.subscriptions).toBe('^-------!');
    });
  });

  it('forwards errors', () => {
    marbles(({ cold, expectObservable }) => {
      const source = cold('x-#', events, new Error('socket closed'));
      expectObservable(source.pipe(clipsWithUpdates(), show)).toBe('a-#', { a: ['x:-:-'] }, new Error('socket closed'));
    });
  });
});
