// Where a joining page starts, step by step without Redis: every cursor gets an answer (follow,
// a reset with the replay, the end again, not found), never a wait for entries that cannot come.
import { describe, expect, it } from 'vitest';
import { joinDecision, type JoinDecision, type SessionNow, type StreamNow } from '../../src/fleet/joinDecision.js';
import { decodeEntry, type StreamEntry } from '../../src/fleet/streamEntries.js';
import type { FollowStart } from '../../src/fleet/StreamFollower.js';

const entry = (id: string, kind: string, epoch = 'E', data = '{}'): StreamEntry => decodeEntry(id, ['e', epoch, 'k', kind, 'd', data])!;
const cursor = (c: string): FollowStart => {
  const [epoch, streamId] = c.split(':') as [string, string];
  return { epoch, streamId, seq: Number(streamId.split('-')[1]), cursor: c };
};
const live: SessionNow = { live: true, epoch: 'E' };
const ended: SessionNow = { live: false, epoch: 'E' };
const follow = (start: string | undefined, reset?: { reason: string; after: string }): JoinDecision => ({ kind: 'follow', start: start ? cursor(start) : undefined, reset } as JoinDecision);

describe('joinDecision', () => {
  it('answers every cursor at once', () => {
    const first = entry('100-3', 'event');
    const at5 = entry('105-5', 'event');
    const end = entry('109-9', 'end');
    const table: Array<[string, StreamNow, string | undefined, SessionNow | undefined, JoinDecision]> = [
      ['no cursor: from the oldest kept', { first, at: undefined }, undefined, live, follow(undefined)],
      ['a cursor the stream has', { first, at: at5 }, 'E:105-5', live, follow('E:105-5')],
      ['the end itself: the end again', { first, at: end }, 'E:109-9', ended, { kind: 'ended', end }],
      ['just before the oldest kept: nothing missed', { first, at: undefined }, 'E:99-2', live, follow('E:99-2')],
      ['before what was trimmed', { first, at: undefined }, 'E:90-1', live, follow(undefined, { reason: 'trimmed', after: 'E:90-1' })],
      ['far in the future', { first, at: undefined }, 'E:99999999999999-3', live, follow(undefined, { reason: 'lost', after: 'E:99999999999999-3' })],
      ['the right ms, a number it never had', { first, at: undefined }, 'E:109-999999999', ended, follow(undefined, { reason: 'lost', after: 'E:109-999999999' })],
      ['inside the stream, where it has no entry (a lost tail)', { first, at: undefined }, 'E:104-4', live, follow(undefined, { reason: 'lost', after: 'E:104-4' })],
      ['an entry there, with another number', { first, at: at5 }, 'E:105-7', live, follow(undefined, { reason: 'lost', after: 'E:105-7' })],
      ['another epoch, a new run', { first: entry('200-1', 'start', 'F'), at: undefined }, 'E:105-5', live, follow(undefined, { reason: 'replaced', after: 'E:105-5' })],
      ['another epoch, a restarted stream', { first: entry('200-1', 'start', 'F', '{"restarted":true}'), at: undefined }, 'E:105-5', live, follow(undefined, { reason: 'lost', after: 'E:105-5' })],
      ['nothing kept, live (its stream lost, about to start again)', { first: undefined, at: undefined }, 'E:105-5', live, follow('E:105-5')],
      ['nothing kept, live in another epoch', { first: undefined, at: undefined }, 'E:105-5', { live: true, epoch: 'F' }, follow(undefined, { reason: 'lost', after: 'E:105-5' })],
      ['nothing kept, ended', { first: undefined, at: undefined }, 'E:105-5', ended, { kind: 'not_found' }],
      ['nothing kept, unknown', { first: undefined, at: undefined }, undefined, undefined, { kind: 'not_found' }],
    ];
    for (const [name, now, from, session, want] of table) expect([name, joinDecision(now, from ? cursor(from) : undefined, session)]).toEqual([name, want]);
  });
});
