import { map } from 'rxjs';
import { describe, it } from 'vitest';
import { conversationSnapshot } from 'svc-stream';
import type { ConversationSnapshot } from 'svc-stream';
import { ev } from '../state/fixtures.js';
import { marbles } from './marbles.js';

const show = map((s: ConversationSnapshot) => ({
  clips: s.clips.clips.size,
  roles: [...s.conversation.roles.keys()],
  type: s.conversation.type?.conversation_type_uuid ?? null,
  behaviors: s.behaviors.detections.size,
  topics: s.aggregates.topics,
  done: s.aggregates.audioDurationMs,
}));

const events = {
  r: ev.role('1', 'Agent'),
  c: ev.clip('a'),
  t: ev.type('support'),
  b: ev.behavior('greet', '1'),
  o: ev.topics('refund'),
  O: ev.topics('refund'),
  d: ev.done(1_000),
};
const none = { clips: 0, roles: [], type: null, behaviors: 0, topics: null, done: null };

describe('conversationSnapshot', () => {
  it('emits the whole conversation after each change, and nothing for an event that changes nothing', () => {
    marbles(({ cold, expectObservable, expectSubscriptions }) => {
      const source = cold('r-c-t-b-o-O-d|', events);
      expectObservable(source.pipe(conversationSnapshot(), show)).toBe('r-c-t-b-o---d|', {
        r: { ...none, roles: ['1'] },
        c: { ...none, roles: ['1'], clips: 1 },
        t: { ...none, clips: 1, type: 'support' },
        b: { ...none, clips: 1, type: 'support', behaviors: 1 },
        o: { ...none, clips: 1, type: 'support', behaviors: 1, topics: ['refund'] },
        d: { ...none, clips: 1, type: 'support', behaviors: 1, topics: ['refund'], done: 1_000 },
      });
      expectSubscriptions(source.subscriptions).toBe('^------------!');
    });
  });

  it('unsubscribes from the source when the subscriber leaves', () => {
    marbles(({ hot, expectObservable, expectSubscriptions }) => {
      const source = hot('-r--c--|', events);
      expectObservable(source.pipe(conversationSnapshot(), show), '^--!').toBe('-r--', { r: { ...none, roles: ['1'] } });
      expectSubscriptions(source.subscriptions).toBe('^--!');
    });
  });
});
