// The relay's wire: the messages of a session's event stream, its listing and its refusals as
// zod schemas; the cursor an SSE id names; a failure's summary; an event's wire form. The relay,
// its client and the fleet's publisher and reader all read them (the relay's view of them is
// src/relay/protocol.ts). Browser-safe.
import * as z from 'zod/mini';
import type { ServerEvent } from './events.js';
import { ResultLabelSchema } from './resultLabel.js';

/** A label as the relay's wire carries it: one a reader cannot read (a newer source) reads as none, never a failure. */
const WireLabel = /* @__PURE__ */ z.optional(/* @__PURE__ */ z.catch(ResultLabelSchema, undefined as never));

/* Every zod call is marked pure, as in schema/events.ts: a page that imports no parser carries none. */

/** Validates the `status` message. Infers {@link RelayStatus}. */
export const RelayStatusSchema = /* @__PURE__ */ z.looseObject({
  status: /* @__PURE__ */ z.string(),
  title: /* @__PURE__ */ z.optional(/* @__PURE__ */ z.string()),
  label: WireLabel,
});
/**
 * The `status` message: where the session is (any string: `connecting`, `streaming`,
 * `reconnecting` …), its title, and what made its results (`label`, once known; sent again when
 * it changes, before the first event it labels).
 */
export type RelayStatus = z.infer<typeof RelayStatusSchema>;

/** Validates the `gap` message. Infers {@link RelayGap}. */
export const RelayGapSchema = /* @__PURE__ */ z.looseObject({
  after: /* @__PURE__ */ z.string(),
  next: /* @__PURE__ */ z.string(),
  missed: /* @__PURE__ */ z.int().check(/* @__PURE__ */ z.minimum(1)),
});
/**
 * The `gap` message: `missed` entries between the cursor `after` (the client's last, `''` for
 * none) and `next` (the id of the next message) will never reach this client.
 */
export type RelayGap = z.infer<typeof RelayGapSchema>;

/** Why a relay could not resume a client where it was (see {@link RelayReset}). */
export const RELAY_RESET_REASONS = ['trimmed', 'lost', 'replaced'] as const;

/** Validates the `reset` message. Infers {@link RelayReset}. */
export const RelayResetSchema = /* @__PURE__ */ z.looseObject({
  reason: /* @__PURE__ */ z.enum(RELAY_RESET_REASONS),
  after: /* @__PURE__ */ z.string(),
});
/**
 * The `reset` message: the cursor `after` cannot be resumed, and the messages that follow start
 * at the oldest entry the relay keeps. `reason`: `trimmed` (older than what is kept: the
 * retention passed, or the client was away too long), `lost` (the stream itself was lost, e.g.
 * Redis restarted without persistence, and the publisher started a new one), `replaced` (a new
 * run of the same session id replaced the one the cursor named).
 */
export type RelayReset = z.infer<typeof RelayResetSchema>;

/** Validates a failure as pages are told it. Infers {@link ErrorSummary}. */
export const ErrorSummarySchema = /* @__PURE__ */ z.looseObject({
  code: /* @__PURE__ */ z.string(),
  message: /* @__PURE__ */ z.string(),
});
/** A failure as pages and listings show it: the stable code and the message's first line. */
export type ErrorSummary = z.infer<typeof ErrorSummarySchema>;

/** Validates the `end` message. Infers {@link RelayEnd}. */
export const RelayEndSchema = /* @__PURE__ */ z.looseObject({
  status: /* @__PURE__ */ z.enum(['done', 'failed', 'closed']),
  error: /* @__PURE__ */ z.optional(ErrorSummarySchema),
});
/** The `end` message: how the session ended; `error` is set when it `failed`. */
export type RelayEnd = z.infer<typeof RelayEndSchema>;

/** Validates one entry of `GET /sessions`. Infers {@link RelaySessionInfo}. */
export const RelaySessionInfoSchema = /* @__PURE__ */ z.looseObject({
  id: /* @__PURE__ */ z.string(),
  title: /* @__PURE__ */ z.string(),
  status: /* @__PURE__ */ z.string(),
  /** Events the session has produced so far. */
  events: /* @__PURE__ */ z.int(),
  /** True once the session ended; it stays listed for a while (`keepEndedMs`). */
  ended: /* @__PURE__ */ z.boolean(),
  /** Pages connected to it on this relay now. */
  clients: /* @__PURE__ */ z.int(),
  /** An in-process relay: the number of the oldest event its history holds (`events + 1` when none). */
  firstRetained: /* @__PURE__ */ z.optional(/* @__PURE__ */ z.int()),
  /** A fleet relay: when the session started (ms since the epoch, the publisher's clock). */
  startedAt: /* @__PURE__ */ z.optional(/* @__PURE__ */ z.number()),
  /** A fleet relay: when it ended. */
  endedAt: /* @__PURE__ */ z.optional(/* @__PURE__ */ z.number()),
  /** A fleet relay: the publisher has not been heard from for a while (killed, or cut from Redis) while the session was live. */
  stale: /* @__PURE__ */ z.optional(/* @__PURE__ */ z.boolean()),
  /** Set when the session `failed`. */
  error: /* @__PURE__ */ z.optional(ErrorSummarySchema),
  /** What made the session's results, once known. */
  label: WireLabel,
});
/** One entry of `GET /sessions`. */
export type RelaySessionInfo = z.infer<typeof RelaySessionInfoSchema>;

/** Validates the body of `GET /sessions`. */
export const RelayListingSchema = /* @__PURE__ */ z.looseObject({ sessions: /* @__PURE__ */ z.array(RelaySessionInfoSchema) });

/** Validates a refusal's body (`{ code, message }`, with the HTTP status). */
export const RelayRefusalSchema = /* @__PURE__ */ z.looseObject({ code: /* @__PURE__ */ z.string(), message: /* @__PURE__ */ z.string() });


/**
 * The failure's stable code and first line, as pages are told (an SvcError masks secrets in
 * its message; anything else becomes code `error`). The one summary the relay, the dashboard,
 * the fleet's publisher and the pages use.
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

/** The SSE id of a fleet entry: `EPOCH:MS-SEQ` (read by {@link parseRelayCursor}). */
export function fleetCursor(epoch: string, streamId: string): string {
  return `${epoch}:${streamId}`;
}

/** The event as it was on the wire (an `event` message's data, a fleet entry's): an `unknown` event goes back to its own type and fields. */
export function wireEvent(event: ServerEvent): Record<string, unknown> {
  if (event.type === 'unknown') return { ...event.data, type: event.event_type };
  return event as Record<string, unknown>;
}
