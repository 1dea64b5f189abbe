// What the fleet dashboard's page is sent of each call, as a zod schema the page checks it with.
import * as z from 'zod/mini';
import { ErrorSummarySchema } from './relay.js';
import { ResultLabelSchema } from './resultLabel.js';

/** What the supervisor's page is told of one call. Infers {@link FleetCall}. */
export const FleetCallSchema = /* @__PURE__ */ z.object({
  id: /* @__PURE__ */ z.string(),
  title: /* @__PURE__ */ z.string(),
  /** The session's status (`connecting`, `streaming`, `reconnecting`, `done`, `failed` …). */
  status: /* @__PURE__ */ z.string(),
  ended: /* @__PURE__ */ z.boolean(),
  /** The publisher was not heard from for a while (killed, or cut off from Redis) while the call was live. */
  stale: /* @__PURE__ */ z.boolean(),
  /** When the call started and ended (ms since the epoch, the publisher's clock). */
  startedAt: /* @__PURE__ */ z.nullable(/* @__PURE__ */ z.number()),
  endedAt: /* @__PURE__ */ z.nullable(/* @__PURE__ */ z.number()),
  /** Audio analysed so far, ms (the `done` duration, else the end of the latest clip). */
  audioMs: /* @__PURE__ */ z.nullable(/* @__PURE__ */ z.number()),
  events: /* @__PURE__ */ z.number(),
  conversationType: /* @__PURE__ */ z.nullable(/* @__PURE__ */ z.string()),
  roles: /* @__PURE__ */ z.array(/* @__PURE__ */ z.object({ speaker: /* @__PURE__ */ z.string(), role: /* @__PURE__ */ z.string() })),
  /** The latest emotion of any clip, and whose. */
  emotion: /* @__PURE__ */ z.nullable(/* @__PURE__ */ z.object({ speaker: /* @__PURE__ */ z.nullable(/* @__PURE__ */ z.string()), emotion: /* @__PURE__ */ z.string() })),
  /** The latest behavior detections, newest last (at most five). */
  behaviors: /* @__PURE__ */ z.array(/* @__PURE__ */ z.object({ name: /* @__PURE__ */ z.string(), speaker: /* @__PURE__ */ z.nullable(/* @__PURE__ */ z.string()) })),
  behaviorCount: /* @__PURE__ */ z.number(),
  /** The view restarted from the oldest entry kept (a reset): earlier events are not in it. */
  partial: /* @__PURE__ */ z.boolean(),
  error: /* @__PURE__ */ z.nullable(ErrorSummarySchema),
  /** What made the call's results, once its publisher said (null before). */
  label: /* @__PURE__ */ z.nullable(ResultLabelSchema),
});
/** One call as the supervisor's page shows it. */
export type FleetCall = z.infer<typeof FleetCallSchema>;

