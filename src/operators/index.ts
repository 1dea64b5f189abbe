// Operators: the thin public layer over src/. One operator per file.
/// <reference types="node" preserve="true" />
// Sessions
export * from './analyzeConversation.js';
export * from './streamJson.js';
// Derived streams (ordering rules of §3)
export * from './clipsWithUpdates.js';
export * from './liveTranscript.js';
export * from './currentRoles.js';
export * from './conversationType.js';
export * from './behaviorDetections.js';
export * from './latestTopics.js';
export * from './topicSentiments.js';
export * from './latestSummary.js';
export * from './audioDuration.js';
export * from './conversationSnapshot.js';
// Batch calls over many files
export * from './tagFiles.js';
export * from './emotionFiles.js';
export * from './batchFiles.js';
