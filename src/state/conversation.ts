// Ordering rules 3-4 (§3): the conversation-type pick and the participant-role pick of
// each speaker, including when a type change discards the roles picked before it.
import type { ConversationTypePick, ParticipantRolePick, ServerEvent } from '../schema/events.js';
import { OrderedMap } from './OrderedMap.js';

/** The current conversation-type pick and role picks per speaker (§3 rules 3-4), with a count of roles discarded by type changes. */
export interface ConversationState {
  /** The latest conversation-type pick; null until the first `conversation_type`. */
  readonly type: ConversationTypePick | null;
  /**
   * Current role picks keyed by `speaker_label`, in order of first assignment since the
   * last discard. A speaker with no entry is unassigned.
   */
  readonly roles: OrderedMap<ParticipantRolePick>;
  /** How many role picks type changes have discarded so far (rule 3), for reporting. */
  readonly discardedRoles: number;
}

/** The conversation state before any event: no type, no roles. Seed for {@link conversationReducer}. */
export const initialConversationState: ConversationState = {
  type: null,
  roles: OrderedMap.empty(),
  discardedRoles: 0,
};

/**
 * Apply one event to the conversation state. Pure; an event this reducer does not handle
 * returns the same state object.
 *
 * - `conversation_type`: replaces the pick. When `conversation_type_uuid` changes, or when
 *   this is the first type and roles were already picked, every role pick is discarded.
 *   The same uuid again (a refined pick) keeps the roles.
 * - `participant_role`: sets the role of its `speaker_label`, replacing an earlier one.
 *   A compatible role carried forward after a type change arrives as such an event and
 *   simply sets it again. A pick with `participant_role_uuid: null` (tolerated, not
 *   contract) leaves the speaker unassigned: its entry is removed, not set.
 */
export function conversationReducer(state: ConversationState, event: ServerEvent): ConversationState {
  switch (event.type) {
    case 'conversation_type': {
      const pick = event.pick;
      const previous = state.type;
      const discard = previous === null
        ? state.roles.size > 0
        : previous.conversation_type_uuid !== pick.conversation_type_uuid;
      if (!discard) return { ...state, type: pick };
      return {
        type: pick,
        roles: OrderedMap.empty(),
        discardedRoles: state.discardedRoles + state.roles.size,
      };
    }
    case 'participant_role': {
      const speaker = event.pick.speaker_label;
      if (event.pick.participant_role_uuid !== null) return { ...state, roles: state.roles.set(speaker, event.pick) };
      if (!state.roles.has(speaker)) return state;
      // Rare (an explicit "no role"), and a conversation has few speakers: rebuilding is fine.
      return { ...state, roles: OrderedMap.of([...state.roles.entries()].filter(([label]) => label !== speaker)) };
    }
    default:
      return state;
  }
}
