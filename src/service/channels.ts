// What the library measures, published on node:diagnostics_channel (as undici does): a user
// who does not run the CLI subscribes to the channels by name; nothing is built when nobody does.
import diagnosticsChannel from 'node:diagnostics_channel';
import type { ServiceState } from './serviceState.js';

/** The channel names (`diagnostics_channel.subscribe(name, fn)`); docs/operations.md describes each message. */
export const DIAGNOSTICS_CHANNELS = {
  /** A service's state changed: `{ state }` ({@link ServiceState}). */
  service: 'svc-stream:service',
  /** A call was accepted by `analyzeCalls`: `{ id, status }` (`queued` or `running`). */
  callStart: 'svc-stream:call:start',
  /** A call ended: `{ id, status, code, session }` (its outcome, the error code if any, the session's counters). */
  callEnd: 'svc-stream:call:end',
} as const;

const serviceChannel = diagnosticsChannel.channel(DIAGNOSTICS_CHANNELS.service);
export const callStartChannel = diagnosticsChannel.channel(DIAGNOSTICS_CHANNELS.callStart);
export const callEndChannel = diagnosticsChannel.channel(DIAGNOSTICS_CHANNELS.callEnd);

/** Tell `svc-stream:service` of a state change (only when someone listens). */
export function publishServiceState(state: ServiceState): void {
  if (serviceChannel.hasSubscribers) serviceChannel.publish({ state });
}
