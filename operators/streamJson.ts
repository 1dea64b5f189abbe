export { streamJson, type JsonStreamingOptions } from '../src/session/jsonStreaming.js';
