// 'svc-stream/relay': a live session's events relayed to browser pages (server-sent events
// with resumable delivery, an Origin allow-list and a token), and the client pages read it with.
/// <reference types="node" preserve="true" />

export { createRelay, type Relay, type RelayOptions, type RelaySessionOptions, type RelayStats } from './server.js';
export type { RelaySession, RelaySessionCounters } from './relaySession.js';
export { RELAY_TOKEN_COOKIE, type RelayTokenCheck } from './access.js';
export { RELAY_MESSAGES, RELAY_RESET_REASONS, parseRelayCursor, type RelayStatus, type RelayGap, type RelayReset, type RelayEnd, type RelaySessionInfo, type RelayCursor, type ErrorSummary } from './protocol.js';
export {
  relayMessages,
  relayEvents,
  listRelaySessions,
  relaySessionUrl,
  type RelayClientOptions,
  type RelayEventsOptions,
  type RelayMessage,
} from './client.js';
export { RelayError } from '../errors.js';
