export { FlowControl } from './flow.js';
export { createSessionStats, type SessionPhase, type SessionStats } from './stats.js';
export { CONVERSATION_STREAMING_PATH, STREAMING_PATHS, checkAudioParams, streamingUrl } from './url.js';
export { streamingSession, resolveEndpoint, type StreamingOptions, type StreamProtocol, type Decoded, type WebSocketFactory } from './streamingSession.js';
export { analyzeConversation, conversationSession, conversationProtocol, configFrame, type ConversationOptions } from './conversation.js';
export { streamJson, JsonFrameSchema, type JsonFrame, type JsonEndpoint, type JsonStreamingOptions } from './jsonStreaming.js';
