export { analyzeConversation, type ConversationOptions } from '../src/session/conversation.js';
