import { map } from 'rxjs';
import { describe, it } from 'vitest';
import { behaviorDetections } from 'svc-stream';
import type { OrderedMap, BehaviorDetection } from 'svc-stream';
import { ev } from '../state/fixtures.js';
import { marbles } from './marbles.js';

const show = map((d: OrderedMap<BehaviorDetection>) => d.toArray().map((x) => `${x.behavior_uuid}/${x.speaker_label ?? '-'}`));

const events = {
  p: ev.partial('c1', { text: 'hi the' }),
  g: ev.behavior('greet', '1'),
  c: ev.clip('c1', { text: 'hi there' }),
  G: ev.behavior('greet', '1'),
  r: ev.role('1', 'Agent'),
  t: ev.type('support'),
  s: ev.type('sales'),
  e: ev.behavior('escalate', '2'),
  d: ev.done(30_000),
};

describe('behaviorDetections', () => {
  it('applies a detection during an utterance and after the end of audio; ignores a duplicate; survives type and role changes', () => {
    marbles(({ cold, expectObservable, expectSubscriptions }) => {
      // The last clip is `c`; the client ends the audio after it, and the server still sends
      // `e` (after a type change) before `done`.
      const source = cold('p-g-c-G-r-t-s-e-d|', events);
      expectObservable(source.pipe(behaviorDetections(), show)).toBe('--a-----------b--|', {
        a: ['greet/1'],
        b: ['greet/1', 'escalate/2'],
      });
      expectSubscriptions(source.subscriptions).toBe('^----------------!');
    });
  });

  it('unsubscribes from the source when the subscriber leaves', () => {
    marbles(({ hot, expectObservable, expectSubscriptions }) => {
      const source = hot('-g--e--|', events);
      expectObservable(source.pipe(behaviorDetections(), show), '^--!').toBe('-a--', { a: ['greet/1'] });
      expectSubscriptions(source.subscriptions).toBe('^--!');
    });
  });
});
