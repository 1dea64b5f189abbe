// 'svc-stream/state': the ordering rules of §3 as pure reducers `(state, event) => state`, for
// those who fold events themselves (a store, a page, a test); the `OrderedMap` their states
// hold. The live streams over them (splitSession and the state operators) are in the main
// entry. Browser-safe: 'svc-stream/browser' exports this list as it is.
export { OrderedMap } from './OrderedMap.js';
export { clipsReducer, createClipsState, initialClipsState, type ClipsOptions, type ClipsState, type TranscriptEntry } from './clips.js';
export { DEFAULT_MAX_PENDING_UPDATES, type PendingUpdates } from './pendingUpdates.js';
export { conversationReducer, initialConversationState, type ConversationState } from './conversation.js';
export { behaviorKey, behaviorsReducer, initialBehaviorsState, type BehaviorsState } from './behaviors.js';
export { aggregatesReducer, initialAggregatesState, sentimentKey, type AggregatesState } from './aggregates.js';
export { initialConversationSnapshot, snapshotReducer, type ConversationSnapshot } from './snapshot.js';
