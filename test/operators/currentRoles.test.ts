import { map } from 'rxjs';
import { describe, it } from 'vitest';
import { currentRoles } from 'svc-stream';
import type { OrderedMap, ParticipantRolePick } from 'svc-stream';
import { ev } from '../state/fixtures.js';
import { marbles } from './marbles.js';

const show = map((roles: OrderedMap<ParticipantRolePick>) => Object.fromEntries([...roles.entries()].map(([s, p]) => [s, p.name])));

const events = {
  a: ev.role('1', 'Agent'),
  b: ev.role('2', 'Customer'),
  t: ev.type('support'),
  r: ev.type('support', { confidence: 0.95 }),
  c: ev.role('1', 'Agent'),
  d: ev.role('1', 'Supervisor'),
  s: ev.type('sales'),
  e: ev.role('2', 'Buyer'),
  x: ev.clip('k'),
};

describe('currentRoles', () => {
  it('discards roles on the first type after roles; a compatible role carried forward is set again', () => {
    marbles(({ cold, expectObservable, expectSubscriptions }) => {
      const source = cold('a-b-t-c-x-r|', events);
      expectObservable(source.pipe(currentRoles(), show)).toBe('a-b-t-c----|', {
        a: { 1: 'Agent' },
        b: { 1: 'Agent', 2: 'Customer' },
        t: {},
        c: { 1: 'Agent' },
      });
      expectSubscriptions(source.subscriptions).toBe('^----------!');
    });
  });

  it('discards roles when the type uuid changes; a later role replaces an earlier one; a speaker may stay unassigned', () => {
    marbles(({ cold, expectObservable }) => {
      const source = cold('t-a-b-d-s-e|', events);
      expectObservable(source.pipe(currentRoles(), show)).toBe('--a-b-d-s-e|', {
        a: { 1: 'Agent' },
        b: { 1: 'Agent', 2: 'Customer' },
        d: { 1: 'Supervisor', 2: 'Customer' },
        s: {},
        e: { 2: 'Buyer' },
      });
    });
  });

  it('unsubscribes from the source when the subscriber leaves', () => {
    marbles(({ hot, expectObservable, expectSubscriptions }) => {
      const source = hot('-a--b--|', events);
      expectObservable(source.pipe(currentRoles(), show), '^--!').toBe('-a--', { a: { 1: 'Agent' } });
      expectSubscriptions(source.subscriptions).toBe('^--!');
    });
  });
});
