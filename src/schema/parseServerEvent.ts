// The tolerant parser of the conversation socket's frames (§2.5, wire reference). Frames
// arrive nested (`{type, clip: {...}}`) or flat (fields beside `type`); both normalise to the
// nested form of src/schema/events.ts. Out-of-contract values inside a well-formed event are
// tolerated by default (EVENT_TOLERANCE, docs/tolerance.md): normalised where the meaning is
// clear, else an `unknown` event, with a warning. Every export is public.
import * as z from 'zod/mini';
import * as core from 'zod/v4/core';
import en from 'zod/v4/locales/en.js';
import { looseObject } from './looseObject.js';
import type { EventWarning, ToleranceAction } from '../warnings.js';

export type { ToleranceAction } from '../warnings.js';
import { ClipSchema, ParticipantRolePickSchema, SERVER_EVENT_SCHEMAS, ServerEventSchema, type ServerEvent, type ServerEventType } from './events.js';
import { eventUnion } from './eventUnion.js';

const Id = /* @__PURE__ */ z.string().check(/* @__PURE__ */ z.minLength(1));

/** The key that holds each known event's payload in the nested wire form. */
const PAYLOAD_KEY = {
  clip: 'clip',
  partial_clip: 'partial_clip',
  clip_update: 'clip_update',
  conversation_type: 'pick',
  participant_role: 'pick',
  behavior_detection: 'detection',
  topic_sentiment: 'topic_sentiment',
} as const satisfies Partial<Record<ServerEventType, string>>;

/** Event types whose payload is a scalar beside `type` in both forms. */
const SCALAR_TYPES = /* @__PURE__ */ new Set(['topics', 'summary', 'done', 'error']);
const KNOWN_TYPES = /* @__PURE__ */ new Set<string>([...Object.keys(PAYLOAD_KEY), ...SCALAR_TYPES]);

/**
 * The contract's own shapes where they are narrower than what is delivered: strict mode
 * checks these, tolerant mode checks them first and warns about what it had to normalise.
 */
const ContractEventSchema = /* @__PURE__ */ eventUnion(SERVER_EVENT_SCHEMAS, {
  clip: /* @__PURE__ */ looseObject({ type: /* @__PURE__ */ z.literal('clip'), clip: /* @__PURE__ */ z.extend(ClipSchema, { speaker_label: /* @__PURE__ */ z.optional(/* @__PURE__ */ z.string()) }) }),
  participant_role: /* @__PURE__ */ looseObject({ type: /* @__PURE__ */ z.literal('participant_role'), pick: /* @__PURE__ */ z.extend(ParticipantRolePickSchema, { participant_role_uuid: /* @__PURE__ */ z.optional(Id) }) }),
});

/** Per event type, per field of its payload: the action of tolerant parsing. Also in docs/tolerance.md. */
export const EVENT_TOLERANCE = {
  clip: { text: 'drop', start_ms: 'drop', duration_ms: 'drop', speaker_label: 'label', language: 'null', emotion: 'null', accent: 'null', deepfake_score: 'null' },
  partial_clip: { text: 'drop', start_ms: 'drop', end_ms: 'null', speaker_label: 'label', emotion: 'null', accent: 'null', deepfake_score: 'null' },
  clip_update: { emotion: 'drop', accent: 'drop' },
  conversation_type: { name: 'drop', confidence: 'null', detail: 'null', reasoning: 'null' },
  participant_role: { speaker_label: 'label', participant_role_uuid: 'null', name: 'drop', confidence: 'null', selection_source: 'drop', detail: 'null', reasoning: 'null' },
  behavior_detection: { behavior_name: 'drop', speaker_label: 'label', detected: 'drop', confidence: 'null', evidence_clip_uuids: 'drop', definitive_clip_uuid: 'null', reasoning: 'null' },
  topic_sentiment: { speaker_label: 'label', sentiment_label: 'drop' },
  topics: {},
  summary: {},
  done: {},
  error: { error: 'text' },
} as const satisfies Record<Exclude<ServerEventType, 'unknown'>, Readonly<Record<string, ToleranceAction>>>;

/** Options of {@link parseServerEvent} and {@link parseServerEventValue}. */
export interface ParseOptions {
  /**
   * Refuse every out-of-contract value (`ok: false`), as the parser did before tolerance.
   * Default false: normalise it, or deliver the event as `unknown`, with `warnings`.
   */
  readonly strict?: boolean | undefined;
}

/** Outcome of {@link parseServerEvent}: the normalised event, or a `reason` naming the offending path. */
export type ParseResult =
  | { readonly ok: true; readonly event: ServerEvent; readonly warnings?: readonly EventWarning[] | undefined }
  | { readonly ok: false; readonly reason: string };

/**
 * The issues of a value `schema` refused, with messages. They come from the global zod config,
 * as they always did (classic zod, which the Node entries load, installs English); where no
 * locale is loaded (zod/mini alone, as in a page) the value is parsed again with zod's English
 * messages, so a `reason` never degrades to "Invalid input". Only refusals pay for that second
 * parse: a parse given a context skips the compiled fast path, so the first runs without one.
 */
let english: core.ParseContext<core.$ZodIssue> | undefined;
function refusedIssues(schema: core.$ZodType, value: unknown, refused: core.$ZodError): readonly core.$ZodIssue[] {
  const global = core.config();
  if (global.localeError !== undefined || global.customError !== undefined) return refused.issues;
  const again = core.safeParse(schema, value, (english ??= { error: en().localeError }));
  return again.success ? [] : again.error.issues;
}

function issuePath(path: readonly PropertyKey[]): string {
  return path.length > 0 ? path.map(String).join('.') : '(root)';
}

function warning(eventType: string, path: string, reason: string, action: EventWarning['action']): EventWarning {
  const what = {
    null: 'delivered as null',
    drop: 'dropped (as if not sent)',
    label: 'delivered as a speaker label',
    text: 'delivered as text',
    unknown: "the event is delivered as type 'unknown'",
  }[action];
  return { code: 'out_of_contract_value', eventType, path, reason, action, message: `${eventType} event: ${path}: ${reason}; ${what}` };
}

/** The replacement value for `action`, or `DROP`; never called for an event-level failure. */
const DROP = Symbol('drop');
function normalise(action: ToleranceAction, value: unknown): unknown {
  switch (action) {
    case 'null':
      return null;
    case 'drop':
      return DROP;
    case 'label':
      return typeof value === 'number' && Number.isFinite(value) ? String(value) : null;
    case 'text':
      return value === undefined || value === null ? '(no error text)' : typeof value === 'string' ? value : JSON.stringify(value);
  }
}

/**
 * Normalise and validate one decoded JSON value. Never throws. Extra fields are kept; an
 * unknown `type` becomes an `unknown` event. A known type whose payload breaks the contract:
 *
 * - by default, each out-of-contract value is handled as {@link EVENT_TOLERANCE} says and
 *   reported in `warnings`; when a field has no clear meaning without its value, the event
 *   becomes `{ type: 'unknown', event_type, data, reason }` (also with a warning);
 * - with `strict: true`, it is refused with a reason naming the path.
 *
 * A value that is not an object, or has no string `type`, is refused in both modes.
 */
export function parseServerEventValue(value: unknown, options: ParseOptions = {}): ParseResult {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    return { ok: false, reason: 'frame is not a JSON object' };
  }
  const obj = value as Record<string, unknown>;
  const type = obj['type'];
  if (typeof type !== 'string') return { ok: false, reason: 'frame has no string "type"' };
  if (!KNOWN_TYPES.has(type)) {
    const { type: _t, ...data } = obj;
    return { ok: true, event: { type: 'unknown', event_type: type, data } };
  }
  let candidate: Record<string, unknown> = obj;
  const key = (PAYLOAD_KEY as Record<string, string>)[type];
  if (key !== undefined && !(key in obj)) {
    // Flat form: every field beside `type` is the payload.
    const { type: _t, ...payload } = obj;
    candidate = { type, [key]: payload };
  }
  const parsed = ContractEventSchema.safeParse(candidate);
  if (parsed.success) return { ok: true, event: parsed.data as ServerEvent };
  const issues = refusedIssues(ContractEventSchema, candidate, parsed.error);
  const issue = issues[0];
  if (options.strict === true) {
    return { ok: false, reason: `${type} event: ${issuePath(issue?.path ?? [])}: ${issue?.message ?? 'invalid'}` };
  }
  return tolerate(type, obj, candidate, key, issues);
}

/** Tolerant mode: repair what EVENT_TOLERANCE allows, else deliver the frame as `unknown`. */
function tolerate(
  type: string,
  frame: Record<string, unknown>,
  candidate: Record<string, unknown>,
  key: string | undefined,
  issues: readonly core.$ZodIssue[],
): ParseResult {
  const policy = (EVENT_TOLERANCE as Record<string, Readonly<Record<string, ToleranceAction>>>)[type] ?? {};
  const asUnknown = (path: string, reason: string): ParseResult => {
    const { type: _t, ...data } = frame;
    const w = warning(type, path, reason, 'unknown');
    return { ok: true, event: { type: 'unknown', event_type: type, data, reason: `${path}: ${reason}` }, warnings: [w] };
  };
  // Work on copies: the frame stays as received.
  const repaired: Record<string, unknown> = { ...candidate };
  const payload = key !== undefined ? repaired[key] : repaired;
  if (payload === null || typeof payload !== 'object' || Array.isArray(payload)) {
    return asUnknown(key ?? '(root)', issues[0]?.message ?? 'invalid');
  }
  const target: Record<string, unknown> = key !== undefined ? { ...(payload as Record<string, unknown>) } : repaired;
  if (key !== undefined) repaired[key] = target;
  const warnings: EventWarning[] = [];
  const done = new Set<string>();
  for (const issue of issues) {
    const path = issuePath(issue.path);
    const fieldAt = key !== undefined ? 1 : 0;
    const field = issue.path.length > fieldAt && (key === undefined || issue.path[0] === key) ? String(issue.path[fieldAt]) : undefined;
    const action = field !== undefined && Object.hasOwn(policy, field) ? policy[field]! : undefined;
    if (field === undefined || action === undefined) return asUnknown(path, issue.message);
    if (done.has(field)) continue;
    done.add(field);
    const next = normalise(action, target[field]);
    if (next === DROP) delete target[field];
    else target[field] = next;
    warnings.push(warning(type, key !== undefined ? `${key}.${field}` : field, issue.message, action));
  }
  const delivered = ServerEventSchema.safeParse(repaired);
  if (!delivered.success) {
    // A repaired value still out of contract (e.g. a required speaker label that was not a number).
    const i = refusedIssues(ServerEventSchema, repaired, delivered.error)[0];
    return asUnknown(issuePath(i?.path ?? []), i?.message ?? 'invalid');
  }
  return { ok: true, event: delivered.data, warnings };
}

/** Parse one text frame. Never throws. Invalid JSON is refused in both modes. */
export function parseServerEvent(text: string, options: ParseOptions = {}): ParseResult {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { ok: false, reason: 'frame is not valid JSON' };
  }
  return parseServerEventValue(value, options);
}
