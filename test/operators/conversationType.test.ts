import { map } from 'rxjs';
import { describe, it } from 'vitest';
import { conversationType } from 'svc-stream';
import type { ConversationTypePick } from 'svc-stream';
import { ev } from '../state/fixtures.js';
import { marbles } from './marbles.js';

const show = map((p: ConversationTypePick) => `${p.conversation_type_uuid}@${p.confidence ?? '-'}`);

const events = {
  a: ev.role('1', 'Agent'),
  t: ev.type('support'),
  r: ev.type('support', { confidence: 0.9 }),
  s: ev.type('sales'),
};

describe('conversationType', () => {
  it('emits each pick: a new type replaces the previous, a refined pick of the same type too', () => {
    marbles(({ cold, expectObservable, expectSubscriptions }) => {
      const source = cold('a-t-r-s|', events);
      expectObservable(source.pipe(conversationType(), show)).toBe('--t-r-s|', {
        t: 'support@-',
        r: 'support@0.9',
        s: 'sales@-',
      });
      expectSubscriptions(source.subscriptions).toBe('^------!');
    });
  });

  it('emits nothing before a type, and unsubscribes when the subscriber leaves', () => {
    marbles(({ hot, expectObservable, expectSubscriptions }) => {
      const source = hot('-a---t--|', events);
      expectObservable(source.pipe(conversationType(), show), '^---!').toBe('-----');
      expectSubscriptions(source.subscriptions).toBe('^---!');
    });
  });
});
