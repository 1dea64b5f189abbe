import type { OperatorFunction } from 'rxjs';
import type { ParticipantRolePick, ServerEvent } from '../schema/events.js';
import type { OrderedMap } from '../state/OrderedMap.js';
import { conversationReducer, initialConversationState } from '../state/conversation.js';
import { foldState } from '../internal/fold.js';

/**
 * The current participant-role pick of each speaker (ordering rules 3-4).
 *
 * - Emits an {@link OrderedMap} of role picks keyed by `speaker_label` whenever a
 *   `participant_role` sets a role, or a `conversation_type` discards them.
 * - A later role for the same speaker replaces the earlier one.
 * - When `conversation_type_uuid` changes, or the first type arrives after roles, it emits
 *   an empty map: every earlier pick is discarded. A compatible role carried forward
 *   arrives as a new `participant_role` event and is set again by it.
 * - A speaker with no entry is unassigned (which may stay so).
 * - Completes and errors with the source.
 *
 * Cold: each subscription folds its own state. Emitted maps are immutable.
 *
 * ## Example
 * ```ts
 * import { from } from 'rxjs';
 * import type { ServerEvent } from 'svc-stream';
 * import { currentRoles } from 'svc-stream';
 *
 * const events: ServerEvent[] = [
 *   { type: 'participant_role', pick: { speaker_label: '1', name: 'Agent' } },
 *   { type: 'conversation_type', pick: { conversation_type_uuid: 'support', selection_source: 'inferred' } },
 *   { type: 'participant_role', pick: { speaker_label: '1', name: 'Agent' } },
 * ];
 * from(events)
 *   .pipe(currentRoles())
 *   .subscribe((roles) => console.log(roles.get('1')?.name ?? 'unassigned'));
 * // Agent
 * // unassigned
 * // Agent
 * ```
 */
export function currentRoles(): OperatorFunction<ServerEvent, OrderedMap<ParticipantRolePick>> {
  return foldState(conversationReducer, initialConversationState, (s) => s.roles);
}
