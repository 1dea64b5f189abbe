// What the relay and its clients say to each other: the message names and payloads on the
// event stream, the session listing, the cursor an SSE id names, and how an event goes back
// to its wire form. Zod schemas both ends import, so they cannot drift. Browser-safe.
import type { ServerEvent } from '../schema/events.js';
import type { ErrorSummary } from '../schema/relay.js';

export {
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

/**
 * The failure's stable code and first line, as pages are told (an SvcError masks secrets in
 * its message; anything else becomes code `error`). The one summary the relay, the dashboard
 * and the pages use.
 */
export function errorSummary(err: unknown): ErrorSummary {
  const e = err as { code?: unknown; message?: unknown } | null;
  const code = typeof e?.code === 'string' ? e.code : 'error';
  const message = typeof e?.message === 'string' ? e.message.split('\n')[0]! : String(err);
  return { code, message };
}

/**
 * Where a client is in a session, as an SSE id names it:
 * - an in-process relay: the event's number, `"17"` (epoch `''`);
 * - a fleet relay (Redis Streams): `"EPOCH:MS-SEQ"`, the stream's epoch and the entry's stream
 *   id, whose `SEQ` is the entry's number in the session. Every relay of the fleet reads it.
 */
export interface RelayCursor {
  readonly epoch: string;
  /** The entry's number in the session (1, 2, 3 … within one epoch). */
  readonly seq: number;
  /** The Redis stream id (`MS-SEQ`), for a fleet cursor. */
  readonly streamId?: string | undefined;
}

const FLEET_CURSOR = /^([A-Za-z0-9_-]{1,32}):(\d{1,16})-(\d{1,16})$/;

/** Reads an SSE id of either relay; undefined when it is neither form. */
export function parseRelayCursor(id: string): RelayCursor | undefined {
  if (/^\d{1,15}$/.test(id)) return { epoch: '', seq: Number(id) };
  const m = FLEET_CURSOR.exec(id);
  if (!m) return undefined;
  const seq = Number(m[3]);
  if (!Number.isSafeInteger(seq) || !Number.isSafeInteger(Number(m[2]))) return undefined;
  return { epoch: m[1]!, seq, streamId: `${m[2]}-${m[3]}` };
}

/** The SSE id of a fleet entry: `EPOCH:MS-SEQ`. */
export function fleetCursor(epoch: string, streamId: string): string {
  return `${epoch}:${streamId}`;
}

/** A session id made of any name (a file's stem, a provider's call id): characters other than `A-Z a-z 0-9 . _ ~ : -` become `-`, cut to 128. */
export function sessionIdOf(name: string): string {
  return name.replace(/[^A-Za-z0-9._~:-]+/g, '-').slice(0, 128) || 'session';
}

/** The event as it was on the wire: an `unknown` event goes back to its own type and fields. */
export function wireEvent(event: ServerEvent): Record<string, unknown> {
  if (event.type === 'unknown') return { ...event.data, type: event.event_type };
  return event as Record<string, unknown>;
}
