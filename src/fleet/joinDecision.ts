// Where a page that joins a session starts, decided before anything is sent to it from what the
// stream holds now (its first entry, the entry its cursor names) and what the directory says.
// Every cursor gets an answer at once: a position to follow from, a reset with the replay from
// the oldest entry kept, the end again, or "no such session". Pure: the reader does the reads.
import type { RelayReset } from '../schema/relay.js';
import { before, positionOf } from './FollowedStream.js';
import type { StreamEntry } from './streamEntries.js';
import { resetReason, type FollowStart } from './StreamFollower.js';

/** What the stream holds now, as far as a join needs it. */
export interface StreamNow {
  /** The oldest entry kept; undefined when the stream has none (or is gone). */
  readonly first: StreamEntry | undefined;
  /** The entry at the cursor's stream id, when there is one. */
  readonly at: StreamEntry | undefined;
}

/** What the directory says of the session: whether a publisher is writing it now, and its epoch. */
export interface SessionNow {
  readonly live: boolean;
  readonly epoch: string;
}

/** Where the page starts. */
export type JoinDecision =
  /** Follow from `start` (undefined: from the oldest entry kept), telling `reset` first when there is one. */
  | { readonly kind: 'follow'; readonly start: FollowStart | undefined; readonly reset: RelayReset | undefined }
  /** The cursor is the session's end: the page has everything; it is sent the end again. */
  | { readonly kind: 'ended'; readonly end: StreamEntry }
  /** No entry is kept and no publisher is writing it: nothing would ever come. */
  | { readonly kind: 'not_found' };

/**
 * Decide where a page joins, with `from` its cursor (undefined: from the start of what is kept).
 *
 * - No entry kept: a live session (its stream lost with Redis, about to start again) is followed
 *   (a cursor of another epoch than the directory's is reset, `lost`); any other is `not_found`.
 * - A cursor of another epoch than the stream's: `reset` (`lost` or `replaced`, as its first
 *   entry says), then the stream from its oldest entry.
 * - A cursor that names an entry of the stream (same number): followed from it; the `end`
 *   itself answers `ended`.
 * - A cursor before the oldest entry: followed from it when nothing is missing (the oldest is
 *   the next one), else `reset` (`trimmed`).
 * - Any other cursor of the right epoch (past the last entry, or inside the stream where it has
 *   no such entry: a tail lost in a failover, or an id the session never had): `reset`
 *   (`lost`), then the stream from its oldest entry. Never a wait for entries that cannot come.
 */
export function joinDecision(now: StreamNow, from: FollowStart | undefined, session: SessionNow | undefined): JoinDecision {
  const { first, at } = now;
  const follow = (start: FollowStart | undefined, reset?: RelayReset['reason']): JoinDecision => ({
    kind: 'follow',
    start,
    reset: reset && from ? { reason: reset, after: from.cursor } : undefined,
  });
  if (!first) {
    if (!session?.live) return { kind: 'not_found' };
    if (from && session.epoch !== '' && session.epoch !== from.epoch) return follow(undefined, 'lost');
    return follow(from);
  }
  if (!from) return follow(undefined);
  if (first.epoch !== from.epoch) return follow(undefined, resetReason(first));
  if (at && at.epoch === from.epoch && at.seq === from.seq) return at.kind === 'end' ? { kind: 'ended', end: at } : follow(from);
  if (!at && before(positionOf(from.streamId), first)) return first.seq === from.seq + 1 ? follow(from) : follow(undefined, 'trimmed');
  return follow(undefined, 'lost');
}

