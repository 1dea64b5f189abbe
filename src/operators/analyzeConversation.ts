export { analyzeConversation, type ConversationOptions } from '../session/conversation.js';
