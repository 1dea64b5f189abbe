// The relay's wire as zod schemas: the messages of a session's event stream, its listing and
// its refusals. The relay and its client both read them (src/relay/protocol.ts). Browser-safe.
import * as z from 'zod/mini';

/* Every zod call is marked pure, as in schema/events.ts: a page that imports no parser carries none. */

/** Validates the `status` message. Infers {@link RelayStatus}. */
export const RelayStatusSchema = /* @__PURE__ */ z.looseObject({
  status: /* @__PURE__ */ z.string(),
  title: /* @__PURE__ */ z.optional(/* @__PURE__ */ z.string()),
});
/** The `status` message: where the session is (any string: `connecting`, `streaming`, `reconnecting` …), and its title. */
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
});
/** One entry of `GET /sessions`. */
export type RelaySessionInfo = z.infer<typeof RelaySessionInfoSchema>;

/** Validates the body of `GET /sessions`. */
export const RelayListingSchema = /* @__PURE__ */ z.looseObject({ sessions: /* @__PURE__ */ z.array(RelaySessionInfoSchema) });

/** Validates a refusal's body (`{ code, message }`, with the HTTP status). */
export const RelayRefusalSchema = /* @__PURE__ */ z.looseObject({ code: /* @__PURE__ */ z.string(), message: /* @__PURE__ */ z.string() });

