// The derived streams: splitSession and the state operators, one per file, each folding one
// rule family of §3 (a thin public layer over src/state/). Browser-safe: the main entry and
// 'svc-stream/browser' both export this list as it is.
export { splitSession, type SessionStreams } from '../state/splitSession.js';
export { clipsWithUpdates } from './clipsWithUpdates.js';
export { liveTranscript } from './liveTranscript.js';
export { currentRoles } from './currentRoles.js';
export { conversationType } from './conversationType.js';
export { behaviorDetections } from './behaviorDetections.js';
export { latestTopics } from './latestTopics.js';
export { topicSentiments } from './topicSentiments.js';
export { latestSummary } from './latestSummary.js';
export { audioDuration } from './audioDuration.js';
export { conversationSnapshot } from './conversationSnapshot.js';
