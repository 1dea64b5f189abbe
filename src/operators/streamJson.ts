export { streamJson, type JsonStreamingOptions } from '../session/jsonStreaming.js';
