// What the relay and its clients say to each other: the message names and payloads on the
// event stream, the session listing, and how an event goes back to its wire form. One
// table both ends import, so they cannot drift. Browser-safe.
import type { ServerEvent } from '../schema/events.js';

/**
 * The named messages of a relay event stream (`GET /sessions/ID/events`):
 *
 * - `event`: one server event, as the service sent it (JSON), with `id:` its sequence number
 *   in the session (1, 2, 3 …). Only these carry ids, so `Last-Event-ID` names an event.
 * - `status`: the session's status (`{ status, title }`): any string, e.g. `connecting`,
 *   `streaming`, `finishing`, `reconnecting`, `done`, `failed`. Sent first, then on change.
 * - `gap`: events were trimmed from the relay's bounded history before this client got them
 *   ({@link RelayGap}); the events that follow start at `next`.
 * - `end`: the session ended ({@link RelayEnd}); the relay then closes the stream.
 */
export const RELAY_MESSAGES = ['event', 'status', 'gap', 'end'] as const;

/** The `status` message: where the session is, and its title. */
export interface RelayStatus {
  /** Any string; the statuses of a streaming session plus those a helper adds (`reconnecting`). */
  readonly status: string;
  readonly title: string;
}

/** The `gap` message: `missed` events after `after` are no longer in the relay's history; the next event sent is `next`. */
export interface RelayGap {
  /** The last event id the client had (0 for none). */
  readonly after: number;
  /** The id of the next event the relay sends. */
  readonly next: number;
  /** How many events were lost to this client: `next - after - 1`. */
  readonly missed: number;
}

/** The `end` message: how the session ended; `error` is set when it failed. */
export interface RelayEnd {
  readonly status: 'done' | 'failed' | 'closed';
  /** The failure's stable code and its first line (never a secret: the session's errors mask them). */
  readonly error?: { readonly code: string; readonly message: string } | undefined;
}

/** One entry of `GET /sessions`. */
export interface RelaySessionInfo {
  readonly id: string;
  readonly title: string;
  readonly status: string;
  /** Events the session has produced so far (the id of the last one). */
  readonly events: number;
  /** The id of the oldest event still in the relay's history (`events + 1` when it holds none). */
  readonly firstRetained: number;
  /** True once the session ended; it stays listed and joinable for the relay's `keepEndedMs`. */
  readonly ended: boolean;
  /** Pages connected to it now. */
  readonly clients: number;
}

/** The event as it was on the wire: an `unknown` event goes back to its own type and fields. */
export function wireEvent(event: ServerEvent): Record<string, unknown> {
  if (event.type === 'unknown') return { ...event.data, type: event.event_type };
  return event as Record<string, unknown>;
}
