// 'svc-stream/relay': a live session's events relayed to browser pages (server-sent events
// with resumable delivery, an Origin allow-list and a token), and the client pages read it with.
/// <reference types="node" preserve="true" />

export { createRelay, type Relay, type RelaySessionOptions, type RelayStats } from './server.js';
export type { RelayOptions } from './relaySettings.js';
export type { RelaySession, RelaySessionCounters } from './relaySession.js';
export { RELAY_TOKEN_COOKIE, type RelayTokenCheck } from './access.js';
export * from './client.js';
export type { ResultLabel } from '../schema/resultLabel.js';
