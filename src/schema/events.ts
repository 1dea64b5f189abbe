// Server events of the conversation-analysis socket (§2.5, wire reference). Frames arrive
// nested (`{type, clip: {...}}`) or flat (fields beside `type`); both normalise to nested.
// Out-of-contract values inside a well-formed event are tolerated by default (EVENT_TOLERANCE,
// docs/tolerance.md): normalised where the meaning is clear, else an `unknown` event.
// Written with zod/mini (functions instead of methods): a page bundling the browser entry
// carries only the zod it uses here, and none when it imports no schema (docs/browser.md).
import * as z from 'zod/mini';
import * as core from 'zod/v4/core';
import en from 'zod/v4/locales/en.js';

/**
 * `z.looseObject`, on zod core's compiled object parser. zod/mini's own object parser is the
 * interpreted one, 1.4 times slower per event (bench/parse.ts); the compiled one is what
 * classic zod uses, and it falls back to the interpreter where a page's CSP forbids `eval`.
 */
type Init = (inst: z.ZodMiniObject, def: z.ZodMiniObject['_zod']['def']) => void;
const CompiledObject = /* @__PURE__ */ core.$constructor('ZodMiniObject', (inst: z.ZodMiniObject, def: z.ZodMiniObject['_zod']['def']) => {
  (core.$ZodObjectJIT.init as Init)(inst, def);
  (z.ZodMiniType.init as Init)(inst, def);
  core.util.installLazyProp(inst, 'shape', (self: z.ZodMiniObject) => self._zod.def.shape, false);
});
/* @__NO_SIDE_EFFECTS__ */
function looseObject<S extends core.$ZodLooseShape>(shape: S): z.ZodMiniObject<S, core.$loose> {
  return new CompiledObject({ type: 'object', shape, catchall: z.unknown() }) as unknown as z.ZodMiniObject<S, core.$loose>;
}

// Every zod call below is marked pure: esbuild does not read zod's own annotations through the
// namespace, and with the marks a page that imports the reducers but no parser carries no zod
// (test/browser/bundle.test.ts checks it).
const Ms = /* @__PURE__ */ z.int().check(/* @__PURE__ */ z.minimum(0));
const Score01 = /* @__PURE__ */ z.number().check(/* @__PURE__ */ z.minimum(0), /* @__PURE__ */ z.maximum(1));
const SentimentScore = /* @__PURE__ */ z.number().check(/* @__PURE__ */ z.minimum(-1), /* @__PURE__ */ z.maximum(1));
const NullableString = /* @__PURE__ */ z.nullable(/* @__PURE__ */ z.string());
const Id = /* @__PURE__ */ z.string().check(/* @__PURE__ */ z.minLength(1));

/**
 * Validates the payload of a `clip` event (§2.5): one finalized utterance with its
 * `clip_uuid`, text, timing and speaker; `emotion`, `accent` and `deepfake_score` are null
 * unless the matching STT option is on. Extra fields are kept. Infers {@link Clip}.
 */
export const ClipSchema = /* @__PURE__ */ looseObject({
  clip_uuid: Id,
  text: /* @__PURE__ */ z.optional(/* @__PURE__ */ z.string()),
  start_ms: /* @__PURE__ */ z.optional(Ms),
  duration_ms: /* @__PURE__ */ z.optional(Ms),
  /** A string on the wire; `null` when a server sent none (diarization off), tolerated. */
  speaker_label: /* @__PURE__ */ z.optional(NullableString),
  language: /* @__PURE__ */ z.optional(NullableString),
  emotion: /* @__PURE__ */ z.optional(NullableString),
  accent: /* @__PURE__ */ z.optional(NullableString),
  deepfake_score: /* @__PURE__ */ z.optional(/* @__PURE__ */ z.nullable(Score01)),
});
/** A finalized utterance, the payload of a `clip` event (§2.5). */
export type Clip = z.infer<typeof ClipSchema>;

/**
 * Validates the payload of a `partial_clip` event (§2.5): an utterance still in progress.
 * `end_ms` grows and `speaker_label` is null until diarization resolves it; the final
 * `clip` reuses the same `clip_uuid` (§3 rule 1). Infers {@link PartialClip}.
 */
export const PartialClipSchema = /* @__PURE__ */ looseObject({
  clip_uuid: Id,
  text: /* @__PURE__ */ z.optional(/* @__PURE__ */ z.string()),
  start_ms: /* @__PURE__ */ z.optional(Ms),
  end_ms: /* @__PURE__ */ z.optional(/* @__PURE__ */ z.nullable(Ms)),
  speaker_label: /* @__PURE__ */ z.optional(NullableString),
  emotion: /* @__PURE__ */ z.optional(NullableString),
  accent: /* @__PURE__ */ z.optional(NullableString),
  deepfake_score: /* @__PURE__ */ z.optional(/* @__PURE__ */ z.nullable(Score01)),
});
/** An in-progress utterance, the payload of a `partial_clip` event (§2.5). */
export type PartialClip = z.infer<typeof PartialClipSchema>;

/**
 * Validates the payload of a `clip_update` event (§2.5): refined `emotion` / `accent`
 * values for an earlier `clip`. Each field present supersedes the earlier value (§3 rule 2).
 * Infers {@link ClipUpdate}.
 */
export const ClipUpdateSchema = /* @__PURE__ */ looseObject({
  clip_uuid: Id,
  emotion: /* @__PURE__ */ z.optional(NullableString),
  accent: /* @__PURE__ */ z.optional(NullableString),
});
/** Refined values for an earlier clip, the payload of a `clip_update` event (§2.5, §3 rule 2). */
export type ClipUpdate = z.infer<typeof ClipUpdateSchema>;

/** How the server chose a conversation type or role (§2.5): `inferred`, `auto_selected_single_option` or `default`. */
export const SELECTION_SOURCES = ['inferred', 'auto_selected_single_option', 'default'] as const;
/** Validates a `selection_source` value: one of {@link SELECTION_SOURCES}. */
export const SelectionSourceSchema = /* @__PURE__ */ z.enum(SELECTION_SOURCES);

/**
 * Validates the payload (`pick`) of a `conversation_type` event (§2.5): the conversation
 * type the server picked and how (`selection_source`). A new pick replaces the previous
 * one (§3 rule 3). Infers {@link ConversationTypePick}.
 */
export const ConversationTypePickSchema = /* @__PURE__ */ looseObject({
  conversation_type_uuid: Id,
  name: /* @__PURE__ */ z.optional(/* @__PURE__ */ z.string()),
  confidence: /* @__PURE__ */ z.optional(/* @__PURE__ */ z.nullable(Score01)),
  selection_source: SelectionSourceSchema,
  detail: /* @__PURE__ */ z.optional(NullableString),
  reasoning: /* @__PURE__ */ z.optional(NullableString),
});
/** The server's current conversation-type pick, the payload of a `conversation_type` event (§2.5, §3 rule 3). */
export type ConversationTypePick = z.infer<typeof ConversationTypePickSchema>;

/**
 * Validates the payload (`pick`) of a `participant_role` event (§2.5): the role assigned to
 * one `speaker_label`. A later pick for the same speaker replaces the earlier one
 * (§3 rule 4). Infers {@link ParticipantRolePick}.
 */
export const ParticipantRolePickSchema = /* @__PURE__ */ looseObject({
  speaker_label: Id,
  /** `null` (tolerated, not contract): the speaker is left unassigned. */
  participant_role_uuid: /* @__PURE__ */ z.optional(/* @__PURE__ */ z.nullable(Id)),
  name: /* @__PURE__ */ z.optional(/* @__PURE__ */ z.string()),
  confidence: /* @__PURE__ */ z.optional(/* @__PURE__ */ z.nullable(Score01)),
  selection_source: /* @__PURE__ */ z.optional(SelectionSourceSchema),
  detail: /* @__PURE__ */ z.optional(NullableString),
  reasoning: /* @__PURE__ */ z.optional(NullableString),
});
/** A role assigned to one speaker, the payload of a `participant_role` event (§2.5, §3 rule 4). */
export type ParticipantRolePick = z.infer<typeof ParticipantRolePickSchema>;

/**
 * Validates the payload (`detection`) of a `behavior_detection` event (§2.5): a positive
 * detection of one configured behavior for one speaker, with evidence clips. Emitted at
 * most once per behavior and speaker, never withdrawn (§3 rule 5). Infers {@link BehaviorDetection}.
 */
export const BehaviorDetectionSchema = /* @__PURE__ */ looseObject({
  behavior_uuid: Id,
  behavior_name: /* @__PURE__ */ z.optional(/* @__PURE__ */ z.string()),
  speaker_label: /* @__PURE__ */ z.optional(NullableString),
  detected: /* @__PURE__ */ z.optional(/* @__PURE__ */ z.boolean()),
  confidence: /* @__PURE__ */ z.optional(/* @__PURE__ */ z.nullable(Score01)),
  evidence_clip_uuids: /* @__PURE__ */ z.optional(/* @__PURE__ */ z.array(/* @__PURE__ */ z.string())),
  definitive_clip_uuid: /* @__PURE__ */ z.optional(NullableString),
  reasoning: /* @__PURE__ */ z.optional(NullableString),
});
/** One behavior detected for one speaker, the payload of a `behavior_detection` event (§2.5, §3 rule 5). */
export type BehaviorDetection = z.infer<typeof BehaviorDetectionSchema>;

/**
 * Validates the payload of a `topic_sentiment` event (§2.5): one speaker's sentiment on one
 * topic, `sentiment_score` from -1.0 (most negative) to 1.0 (most positive). A later value
 * supersedes an earlier one for the same topic and speaker (§3 rule 6). Infers {@link TopicSentiment}.
 */
export const TopicSentimentSchema = /* @__PURE__ */ looseObject({
  topic: /* @__PURE__ */ z.string(),
  speaker_label: /* @__PURE__ */ z.string(),
  sentiment_score: SentimentScore,
  sentiment_label: /* @__PURE__ */ z.optional(/* @__PURE__ */ z.string()),
});
/** One speaker's sentiment on one topic, the payload of a `topic_sentiment` event (§2.5, §3 rule 6). */
export type TopicSentiment = z.infer<typeof TopicSentimentSchema>;

/** Validates a nested `clip` event `{ type: 'clip', clip }` (§2.5). Infers {@link ClipEvent}. */
export const ClipEventSchema = /* @__PURE__ */ looseObject({ type: /* @__PURE__ */ z.literal('clip'), clip: ClipSchema });
/** Validates a nested `partial_clip` event `{ type: 'partial_clip', partial_clip }` (§2.5). Infers {@link PartialClipEvent}. */
export const PartialClipEventSchema = /* @__PURE__ */ looseObject({ type: /* @__PURE__ */ z.literal('partial_clip'), partial_clip: PartialClipSchema });
/** Validates a nested `clip_update` event `{ type: 'clip_update', clip_update }` (§2.5). Infers {@link ClipUpdateEvent}. */
export const ClipUpdateEventSchema = /* @__PURE__ */ looseObject({ type: /* @__PURE__ */ z.literal('clip_update'), clip_update: ClipUpdateSchema });
/** Validates a nested `conversation_type` event `{ type: 'conversation_type', pick }` (§2.5). Infers {@link ConversationTypeEvent}. */
export const ConversationTypeEventSchema = /* @__PURE__ */ looseObject({ type: /* @__PURE__ */ z.literal('conversation_type'), pick: ConversationTypePickSchema });
/** Validates a nested `participant_role` event `{ type: 'participant_role', pick }` (§2.5). Infers {@link ParticipantRoleEvent}. */
export const ParticipantRoleEventSchema = /* @__PURE__ */ looseObject({ type: /* @__PURE__ */ z.literal('participant_role'), pick: ParticipantRolePickSchema });
/** Validates a nested `behavior_detection` event `{ type: 'behavior_detection', detection }` (§2.5). Infers {@link BehaviorDetectionEvent}. */
export const BehaviorDetectionEventSchema = /* @__PURE__ */ looseObject({ type: /* @__PURE__ */ z.literal('behavior_detection'), detection: BehaviorDetectionSchema });
/** Validates a `topics` event: the full topic list, which replaces the previous one (§2.5, §3 rule 6). Infers {@link TopicsEvent}. */
export const TopicsEventSchema = /* @__PURE__ */ looseObject({ type: /* @__PURE__ */ z.literal('topics'), topics: /* @__PURE__ */ z.array(/* @__PURE__ */ z.string()) });
/** Validates a nested `topic_sentiment` event `{ type: 'topic_sentiment', topic_sentiment }` (§2.5). Infers {@link TopicSentimentEvent}. */
export const TopicSentimentEventSchema = /* @__PURE__ */ looseObject({ type: /* @__PURE__ */ z.literal('topic_sentiment'), topic_sentiment: TopicSentimentSchema });
/** Validates a `summary` event: the full summary `text` (null in some batch replies), replacing the previous one (§2.5, §3 rule 6). Infers {@link SummaryEvent}. */
export const SummaryEventSchema = /* @__PURE__ */ looseObject({ type: /* @__PURE__ */ z.literal('summary'), text: /* @__PURE__ */ z.nullable(/* @__PURE__ */ z.string()) });
/** Validates the `done` event: total audio duration in `duration_ms`, sent last on a clean finish (§2.5, §3). Infers {@link DoneEvent}. */
export const DoneEventSchema = /* @__PURE__ */ looseObject({ type: /* @__PURE__ */ z.literal('done'), duration_ms: Ms });
/** Validates an `error` event: the server's description of a processing failure, sent before every close except 1000 (§2.5, §6). Infers {@link ErrorEvent}. */
export const ErrorEventSchema = /* @__PURE__ */ looseObject({ type: /* @__PURE__ */ z.literal('error'), error: /* @__PURE__ */ z.string() });
/** A frame whose `type` this client does not know: passed through, never a failure. */
export const UnknownEventSchema = /* @__PURE__ */ z.object({
  type: /* @__PURE__ */ z.literal('unknown'),
  event_type: /* @__PURE__ */ z.string(),
  data: /* @__PURE__ */ z.record(/* @__PURE__ */ z.string(), /* @__PURE__ */ z.unknown()),
  /** Set when `event_type` is a known type whose payload broke the contract: why it is here. */
  reason: /* @__PURE__ */ z.optional(/* @__PURE__ */ z.string()),
});

/**
 * Validates any server event of the conversation-analysis socket in its normalised nested
 * form, discriminated on `type` (§2.5, §6), including the client-side `unknown` kind.
 * Infers {@link ServerEvent}. To parse raw frames (flat or nested) use {@link parseServerEvent}.
 */
export const ServerEventSchema = /* @__PURE__ */ z.discriminatedUnion('type', [
  ClipEventSchema,
  PartialClipEventSchema,
  ClipUpdateEventSchema,
  ConversationTypeEventSchema,
  ParticipantRoleEventSchema,
  BehaviorDetectionEventSchema,
  TopicsEventSchema,
  TopicSentimentEventSchema,
  SummaryEventSchema,
  DoneEventSchema,
  ErrorEventSchema,
  UnknownEventSchema,
]);
/** Any event of the conversation-analysis socket (§2.5, §6), normalised to the nested form; unknown kinds arrive as {@link UnknownEvent}. */
export type ServerEvent = z.infer<typeof ServerEventSchema>;
/** The `type` discriminator of a {@link ServerEvent}: the eleven kinds of §6 plus `unknown`. */
export type ServerEventType = ServerEvent['type'];
/** The member of {@link ServerEvent} whose `type` is `T`, e.g. `EventOf<'clip'>`. */
export type EventOf<T extends ServerEventType> = Extract<ServerEvent, { type: T }>;

/** A `clip` event: a finalized utterance (§2.5). */
export type ClipEvent = EventOf<'clip'>;
/** A `partial_clip` event: an utterance in progress, may repeat per `clip_uuid` (§2.5, §3 rule 1). */
export type PartialClipEvent = EventOf<'partial_clip'>;
/** A `clip_update` event: refined fields for an earlier clip (§2.5, §3 rule 2). */
export type ClipUpdateEvent = EventOf<'clip_update'>;
/** A `conversation_type` event: a new conversation-type pick (§2.5, §3 rule 3). */
export type ConversationTypeEvent = EventOf<'conversation_type'>;
/** A `participant_role` event: a role pick for one speaker (§2.5, §3 rule 4). */
export type ParticipantRoleEvent = EventOf<'participant_role'>;
/** A `behavior_detection` event: one positive detection (§2.5, §3 rule 5). */
export type BehaviorDetectionEvent = EventOf<'behavior_detection'>;
/** A `topics` event: the full current topic list (§2.5, §3 rule 6). */
export type TopicsEvent = EventOf<'topics'>;
/** A `topic_sentiment` event: one speaker's sentiment on one topic (§2.5, §3 rule 6). */
export type TopicSentimentEvent = EventOf<'topic_sentiment'>;
/** A `summary` event: the full current summary (§2.5, §3 rule 6). */
export type SummaryEvent = EventOf<'summary'>;
/** The `done` event: total audio duration, the last event of a clean session (§2.5, §3). */
export type DoneEvent = EventOf<'done'>;
/** An `error` event: the server's reason for a processing failure; the socket closes after it (§2.5, §6). */
export type ErrorEvent = EventOf<'error'>;
/** A frame whose `type` this client does not know, kept as `event_type` plus raw `data` instead of failing. */
export type UnknownEvent = EventOf<'unknown'>;

/** The key that holds each known event's payload in the nested wire form. */
export const PAYLOAD_KEY = {
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
const ContractEventSchema = /* @__PURE__ */ z.discriminatedUnion('type', [
  /* @__PURE__ */ looseObject({ type: /* @__PURE__ */ z.literal('clip'), clip: /* @__PURE__ */ z.extend(ClipSchema, { speaker_label: /* @__PURE__ */ z.optional(/* @__PURE__ */ z.string()) }) }),
  PartialClipEventSchema,
  ClipUpdateEventSchema,
  ConversationTypeEventSchema,
  /* @__PURE__ */ looseObject({ type: /* @__PURE__ */ z.literal('participant_role'), pick: /* @__PURE__ */ z.extend(ParticipantRolePickSchema, { participant_role_uuid: /* @__PURE__ */ z.optional(Id) }) }),
  BehaviorDetectionEventSchema,
  TopicsEventSchema,
  TopicSentimentEventSchema,
  SummaryEventSchema,
  DoneEventSchema,
  ErrorEventSchema,
]);

/**
 * What tolerant parsing does with an out-of-contract value of one field:
 * - `null`: the value becomes `null` ("none"), which the delivered type allows;
 * - `drop`: the field is removed, as if the server had not sent it (a `clip_update` then
 *   keeps the earlier value);
 * - `label`: a speaker label; a number becomes its decimal text, anything else `null`;
 * - `text`: the value becomes text (`JSON.stringify`), so an `error` is never lost.
 * A field with no entry (an id, a required score, a `topics` list…) has no clear meaning
 * without its value: the whole event is delivered as `{ type: 'unknown', reason }`.
 */
export type ToleranceAction = 'null' | 'drop' | 'label' | 'text';

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

/** One out-of-contract value met in an otherwise well-formed event, and what was done with it. */
export interface EventWarning {
  /** Always `out_of_contract_value`: one code, so a handler can switch on it as on errors. */
  readonly code: 'out_of_contract_value';
  /** The frame's `type`. */
  readonly eventType: string;
  /** Where, in the nested form: `clip.speaker_label`, `pick.participant_role_uuid`, `duration_ms`. */
  readonly path: string;
  /** What the contract wanted, e.g. `Invalid input: expected string, received null`. */
  readonly reason: string;
  /** `null`, `drop`, `label`, `text` (the event was delivered with the value normalised) or `unknown` (delivered as an `unknown` event). */
  readonly action: ToleranceAction | 'unknown';
  /** One line saying all of it, for a log. */
  readonly message: string;
}

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
