// What the relay and its clients say to each other: the message names and payloads on the
// event stream, the session listing, the cursor an SSE id names, and how an event goes back
// to its wire form. The wire itself lives in src/schema/relay.ts (the fleet's publisher and
// reader write and read it too, and import nothing of the relay); this is the relay's view of
// it, with the message names. Browser-safe.
export {
  errorSummary,
  parseRelayCursor,
  fleetCursor,
  wireEvent,
  type RelayCursor,
  RelayStatusSchema,
  RelayGapSchema,
  RELAY_RESET_REASONS,
  RelayResetSchema,
  ErrorSummarySchema,
  RelayEndSchema,
  RelaySessionInfoSchema,
  RelayListingSchema,
  RelayRefusalSchema,
  type RelayStatus,
  type RelayGap,
  type RelayReset,
  type ErrorSummary,
  type RelayEnd,
  type RelaySessionInfo,
} from '../schema/relay.js';

/**
 * The named messages of a relay event stream (`GET /sessions/ID/events`):
 *
 * - `event`: one server event, as the service sent it (JSON).
 * - `status`: the session's status ({@link RelayStatus}): `connecting`, `streaming`,
 *   `reconnecting` …. Sent first, then on change.
 * - `gap`: entries this client will never get, in the middle of the session
 *   ({@link RelayGap}): trimmed from a relay's bounded history while the client lagged, or
 *   never published (a publisher that could not reach Redis for long). The stream goes on.
 * - `reset`: the position the client resumed from is no longer kept ({@link RelayReset}):
 *   what follows starts at the oldest entry kept, so a client that folds state starts again.
 * - `end`: the session ended ({@link RelayEnd}); the relay then closes the stream.
 *
 * Every message that moves the client's position carries an `id:` (a cursor, see
 * {@link parseRelayCursor}); `Last-Event-ID` names it to resume on any relay of the fleet.
 */
export const RELAY_MESSAGES = ['event', 'status', 'gap', 'reset', 'end'] as const;
