// The browser entry, 'svc-stream/browser': what a page needs to fold a session's events itself
// (event schemas and parser, the reducers, splitSession, the state operators, the relay client).
// Its whole import graph is free of Node built-ins and of top-level Node calls, so it bundles
// for the browser with no shims (test/browser/bundle.test.ts bundles it and runs it in Chromium).

// Events: the schemas, the tolerant parser, and the types derived from them.
export {
  ClipSchema,
  PartialClipSchema,
  ClipUpdateSchema,
  SELECTION_SOURCES,
  SelectionSourceSchema,
  ConversationTypePickSchema,
  ParticipantRolePickSchema,
  BehaviorDetectionSchema,
  TopicSentimentSchema,
  ClipEventSchema,
  PartialClipEventSchema,
  ClipUpdateEventSchema,
  ConversationTypeEventSchema,
  ParticipantRoleEventSchema,
  BehaviorDetectionEventSchema,
  TopicsEventSchema,
  TopicSentimentEventSchema,
  SummaryEventSchema,
  DoneEventSchema,
  ErrorEventSchema,
  UnknownEventSchema,
  ServerEventSchema,
  parseServerEvent,
  parseServerEventValue,
  EVENT_TOLERANCE,
  type ToleranceAction,
  type EventWarning,
  type ParseOptions,
  type Clip,
  type PartialClip,
  type ClipUpdate,
  type ConversationTypePick,
  type ParticipantRolePick,
  type BehaviorDetection,
  type TopicSentiment,
  type ServerEvent,
  type ServerEventType,
  type EventOf,
  type ClipEvent,
  type PartialClipEvent,
  type ClipUpdateEvent,
  type ConversationTypeEvent,
  type ParticipantRoleEvent,
  type BehaviorDetectionEvent,
  type TopicsEvent,
  type TopicSentimentEvent,
  type SummaryEvent,
  type DoneEvent,
  type ErrorEvent,
  type UnknownEvent,
  type ParseResult,
} from '../schema/events.js';

// Errors: the classes the parser's callers and the relay client throw, with their stable codes.
export { ERROR_CODES, SvcError, SessionError, ContractError, InputError, RelayError, isSvcError, type ErrorCode, type SvcErrorOptions } from '../errors.js';

// Derived state: the ordering rules as pure reducers, and one session split into streams.
export { OrderedMap } from '../state/OrderedMap.js';
export { clipsReducer, createClipsState, initialClipsState, type ClipsOptions, type ClipsState, type TranscriptEntry } from '../state/clips.js';
export { DEFAULT_MAX_PENDING_UPDATES, type PendingUpdates } from '../state/pendingUpdates.js';
export { conversationReducer, initialConversationState, type ConversationState } from '../state/conversation.js';
export { behaviorKey, behaviorsReducer, initialBehaviorsState, type BehaviorsState } from '../state/behaviors.js';
export { aggregatesReducer, initialAggregatesState, sentimentKey, type AggregatesState } from '../state/aggregates.js';
export { initialConversationSnapshot, snapshotReducer, type ConversationSnapshot } from '../state/snapshot.js';
export { splitSession, type SessionStreams } from '../state/splitSession.js';

// The state operators (the same as 'svc-stream/operators' exports; each folds one rule family).
export { clipsWithUpdates } from '../operators/clipsWithUpdates.js';
export { liveTranscript } from '../operators/liveTranscript.js';
export { currentRoles } from '../operators/currentRoles.js';
export { conversationType } from '../operators/conversationType.js';
export { behaviorDetections } from '../operators/behaviorDetections.js';
export { latestTopics } from '../operators/latestTopics.js';
export { topicSentiments } from '../operators/topicSentiments.js';
export { latestSummary } from '../operators/latestSummary.js';
export { audioDuration } from '../operators/audioDuration.js';
export { conversationSnapshot } from '../operators/conversationSnapshot.js';

// ---- The relay client: src/relay/client.ts (EventSource/fetch only) is exported on the next line. ----
export {
  relayMessages,
  relayEvents,
  listRelaySessions,
  relaySessionUrl,
  type RelayClientOptions,
  type RelayEventsOptions,
  type RelayMessage,
} from '../relay/client.js';
export { RELAY_MESSAGES, RELAY_RESET_REASONS, parseRelayCursor, type RelayStatus, type RelayGap, type RelayReset, type RelayEnd, type RelaySessionInfo, type RelayCursor, type ErrorSummary } from '../relay/protocol.js';
