export * from './audio.js';
export * from './batch.js';
export * from './config.js';
export * from './events.js';
