import { describe, expect, it } from 'vitest';
import { conversationReducer, initialConversationState, type ConversationState } from 'svc-stream/state';
import { type ServerEvent } from 'svc-stream';
import { ev } from './fixtures.js';

function view(s: ConversationState) {
  return {
    type: s.type ? `${s.type.conversation_type_uuid}@${s.type.confidence ?? '-'}` : null,
    roles: Object.fromEntries([...s.roles.entries()].map(([speaker, pick]) => [speaker, pick.name])),
    discardedRoles: s.discardedRoles,
  };
}

type Row = [label: string, event: ServerEvent, expected: ReturnType<typeof view> | 'same'];

const rows: Row[] = [
  ['role before any type', ev.role('1', 'Agent'), { type: null, roles: { 1: 'Agent' }, discardedRoles: 0 }],
  ['a second speaker', ev.role('2', 'Customer'), { type: null, roles: { 1: 'Agent', 2: 'Customer' }, discardedRoles: 0 }],
  ['the FIRST type after roles discards them all', ev.type('support'), { type: 'support@-', roles: {}, discardedRoles: 2 }],
  ['a compatible role carried forward arrives as a new event and is set', ev.role('1', 'Agent'), { type: 'support@-', roles: { 1: 'Agent' }, discardedRoles: 2 }],
  ['the same type refined replaces the pick and keeps the roles', ev.type('support', { confidence: 0.9 }), { type: 'support@0.9', roles: { 1: 'Agent' }, discardedRoles: 2 }],
  ['a later role for the same speaker replaces the earlier', ev.role('1', 'Supervisor'), { type: 'support@0.9', roles: { 1: 'Supervisor' }, discardedRoles: 2 }],
  ['speaker 2 assigned again', ev.role('2', 'Customer'), { type: 'support@0.9', roles: { 1: 'Supervisor', 2: 'Customer' }, discardedRoles: 2 }],
  ['a type uuid change discards every role', ev.type('sales'), { type: 'sales@-', roles: {}, discardedRoles: 4 }],
  ['only speaker 2 is reassigned; speaker 1 stays unassigned', ev.role('2', 'Buyer'), { type: 'sales@-', roles: { 2: 'Buyer' }, discardedRoles: 4 }],
  ['a clip does not touch the conversation state', ev.clip('a'), 'same'],
  ['a behavior does not touch it either', ev.behavior('greet', '1'), 'same'],
];

describe('conversationReducer (rules 3-4), step by step', () => {
  it('applies every row in order', () => {
    let state = initialConversationState;
    const history: Array<[ConversationState, ReturnType<typeof view>]> = [];
    for (const [label, event, expected] of rows) {
      const next = conversationReducer(state, event);
      if (expected === 'same') expect(next, label).toBe(state);
      else expect(view(next), label).toEqual(expected);
      state = next;
      history.push([state, view(state)]);
    }
    for (const [s, seen] of history) expect(view(s)).toEqual(seen);
  });

  it('a first type with no roles yet discards nothing', () => {
    const s = conversationReducer(initialConversationState, ev.type('support'));
    expect(view(s)).toEqual({ type: 'support@-', roles: {}, discardedRoles: 0 });
  });

  it('a speaker may stay unassigned for the whole session', () => {
    let s = conversationReducer(initialConversationState, ev.type('support'));
    s = conversationReducer(s, ev.role('1', 'Agent'));
    expect(s.roles.get('2')).toBeUndefined();
    expect(s.roles.has('2')).toBe(false);
  });
});
