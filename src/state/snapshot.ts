// The whole-conversation state: every rule family's state side by side, folded by one
// pure reducer, plus what no rule family owns (the server's `error`, unknown events).
import type { ServerEvent } from '../schema/events.js';
import { aggregatesReducer, initialAggregatesState, type AggregatesState } from './aggregates.js';
import { behaviorsReducer, initialBehaviorsState, type BehaviorsState } from './behaviors.js';
import { clipsReducer, initialClipsState, type ClipsState } from './clips.js';
import { conversationReducer, initialConversationState, type ConversationState } from './conversation.js';

/** Everything known about a conversation so far: the four rule-family states, the server's error if any, and how many unknown events arrived. */
export interface ConversationSnapshot {
  readonly clips: ClipsState;
  readonly conversation: ConversationState;
  readonly behaviors: BehaviorsState;
  readonly aggregates: AggregatesState;
  /** The message of the server's `error` event, if one arrived. */
  readonly error: string | null;
  /** How many events of a type this client does not know arrived (passed over, not failed). */
  readonly unknownEvents: number;
}

/** The snapshot before any event, made of each family's initial state. Seed for {@link snapshotReducer}. */
export const initialConversationSnapshot: ConversationSnapshot = {
  clips: initialClipsState,
  conversation: initialConversationState,
  behaviors: initialBehaviorsState,
  aggregates: initialAggregatesState,
  error: null,
  unknownEvents: 0,
};

/**
 * Apply one event to the whole-conversation snapshot by running every rule-family reducer.
 * Pure; returns the same object when no part changed, and keeps every unchanged part by
 * reference, so consumers can compare parts with `===`.
 */
export function snapshotReducer(state: ConversationSnapshot, event: ServerEvent): ConversationSnapshot {
  if (event.type === 'error') return state.error === event.error ? state : { ...state, error: event.error };
  if (event.type === 'unknown') return { ...state, unknownEvents: state.unknownEvents + 1 };
  const clips = clipsReducer(state.clips, event);
  const conversation = conversationReducer(state.conversation, event);
  const behaviors = behaviorsReducer(state.behaviors, event);
  const aggregates = aggregatesReducer(state.aggregates, event);
  if (
    clips === state.clips &&
    conversation === state.conversation &&
    behaviors === state.behaviors &&
    aggregates === state.aggregates
  ) {
    return state;
  }
  return { ...state, clips, conversation, behaviors, aggregates };
}
