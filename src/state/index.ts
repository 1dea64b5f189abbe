// Derived state: the ordering rules of §3 as pure reducers, the persistent map they emit,
// and the function that splits one session into shared derived streams.
export { OrderedMap } from './OrderedMap.js';
export {
  applyUpdate,
  clipsReducer,
  initialClipsState,
  type ClipsState,
  type TranscriptEntry,
} from './clips.js';
export { conversationReducer, initialConversationState, type ConversationState } from './conversation.js';
export { behaviorKey, behaviorsReducer, initialBehaviorsState, type BehaviorsState } from './behaviors.js';
export { aggregatesReducer, initialAggregatesState, sentimentKey, type AggregatesState } from './aggregates.js';
export { initialConversationSnapshot, snapshotReducer, type ConversationSnapshot } from './snapshot.js';
export { splitSession, type SessionStreams } from './splitSession.js';
