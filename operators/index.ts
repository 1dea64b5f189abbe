// Operators: the thin public layer over src/. One operator per file.
export * from './analyzeConversation.js';
export * from './streamJson.js';
