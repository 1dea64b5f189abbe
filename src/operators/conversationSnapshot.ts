import type { OperatorFunction } from 'rxjs';
import type { ServerEvent } from '../schema/events.js';
import { foldState } from '../internal/fold.js';
import { initialConversationSnapshot, snapshotReducer, type ConversationSnapshot } from '../state/snapshot.js';

/**
 * The whole conversation so far: clips, transcript, type, roles, behaviors, topics,
 * sentiments, summary, audio duration, plus the server's error and unknown-event count.
 *
 * - Emits a new {@link ConversationSnapshot} after every event that changes anything;
 *   parts that did not change keep their identity, so `prev.clips === next.clips` tells
 *   that clips did not change.
 * - Emits nothing for an event that changes nothing (a repeated topics list, say).
 * - Completes and errors with the source.
 *
 * Cold: each subscription folds its own state. Snapshots are immutable values; to share
 * one fold between many consumers use `splitSession` (its `snapshot$`) from `svc-stream`.
 *
 * ## Example
 * ```ts
 * import { from } from 'rxjs';
 * import type { ServerEvent } from 'svc-stream';
 * import { conversationSnapshot } from 'svc-stream';
 *
 * const events: ServerEvent[] = [
 *   { type: 'clip', clip: { clip_uuid: 'a', text: 'hello', speaker_label: '1' } },
 *   { type: 'participant_role', pick: { speaker_label: '1', name: 'Agent' } },
 *   { type: 'done', duration_ms: 1200 },
 * ];
 * from(events)
 *   .pipe(conversationSnapshot())
 *   .subscribe((s) => console.log(s.clips.clips.size, s.conversation.roles.size, s.aggregates.audioDurationMs));
 * // 1 0 null
 * // 1 1 null
 * // 1 1 1200
 * ```
 */
export function conversationSnapshot(): OperatorFunction<ServerEvent, ConversationSnapshot> {
  return foldState(snapshotReducer, initialConversationSnapshot, (s) => s);
}
