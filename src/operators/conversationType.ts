import { filter, type OperatorFunction } from 'rxjs';
import type { ConversationTypePick, ServerEvent } from '../schema/events.js';
import { conversationReducer, initialConversationState } from '../state/conversation.js';
import { foldState, isSet } from '../internal/fold.js';

/**
 * The current conversation-type pick (ordering rule 3).
 *
 * - Emits the pick carried by each `conversation_type` event: a new type replaces the
 *   previous one, and a refined pick of the same type is emitted too.
 * - Emits nothing before the first `conversation_type`; ignores every other event.
 * - Completes and errors with the source.
 *
 * Cold: each subscription folds its own state.
 *
 * ## Example
 * ```ts
 * import { from } from 'rxjs';
 * import type { ServerEvent } from 'svc-stream';
 * import { conversationType } from 'svc-stream';
 *
 * const events: ServerEvent[] = [
 *   { type: 'conversation_type', pick: { conversation_type_uuid: 'sales', selection_source: 'default' } },
 *   { type: 'conversation_type', pick: { conversation_type_uuid: 'support', selection_source: 'inferred' } },
 * ];
 * from(events)
 *   .pipe(conversationType())
 *   .subscribe((pick) => console.log(pick.conversation_type_uuid));
 * // sales
 * // support
 * ```
 */
export function conversationType(): OperatorFunction<ServerEvent, ConversationTypePick> {
  return (source) =>
    source.pipe(foldState(conversationReducer, initialConversationState, (s) => s.type), filter(isSet));
}
