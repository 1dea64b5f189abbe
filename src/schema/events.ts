// Server events of the conversation-analysis socket (§2.5, wire reference). Frames arrive
// nested (`{type, clip: {...}}`) or flat (fields beside `type`); both normalise to nested.
import { z } from 'zod';

const Ms = z.number().int().min(0);
const Score01 = z.number().min(0).max(1);
const NullableString = z.string().nullable();

/**
 * Validates the payload of a `clip` event (§2.5): one finalized utterance with its
 * `clip_uuid`, text, timing and speaker; `emotion`, `accent` and `deepfake_score` are null
 * unless the matching STT option is on. Extra fields are kept. Infers {@link Clip}.
 */
export const ClipSchema = z.looseObject({
  clip_uuid: z.string().min(1),
  text: z.string().optional(),
  start_ms: Ms.optional(),
  duration_ms: Ms.optional(),
  speaker_label: z.string().optional(),
  language: NullableString.optional(),
  emotion: NullableString.optional(),
  accent: NullableString.optional(),
  deepfake_score: Score01.nullable().optional(),
});
/** A finalized utterance, the payload of a `clip` event (§2.5). */
export type Clip = z.infer<typeof ClipSchema>;

/**
 * Validates the payload of a `partial_clip` event (§2.5): an utterance still in progress.
 * `end_ms` grows and `speaker_label` is null until diarization resolves it; the final
 * `clip` reuses the same `clip_uuid` (§3 rule 1). Infers {@link PartialClip}.
 */
export const PartialClipSchema = z.looseObject({
  clip_uuid: z.string().min(1),
  text: z.string().optional(),
  start_ms: Ms.optional(),
  end_ms: Ms.nullable().optional(),
  speaker_label: NullableString.optional(),
  emotion: NullableString.optional(),
  accent: NullableString.optional(),
  deepfake_score: Score01.nullable().optional(),
});
/** An in-progress utterance, the payload of a `partial_clip` event (§2.5). */
export type PartialClip = z.infer<typeof PartialClipSchema>;

/**
 * Validates the payload of a `clip_update` event (§2.5): refined `emotion` / `accent`
 * values for an earlier `clip`. Each field present supersedes the earlier value (§3 rule 2).
 * Infers {@link ClipUpdate}.
 */
export const ClipUpdateSchema = z.looseObject({
  clip_uuid: z.string().min(1),
  emotion: NullableString.optional(),
  accent: NullableString.optional(),
});
/** Refined values for an earlier clip, the payload of a `clip_update` event (§2.5, §3 rule 2). */
export type ClipUpdate = z.infer<typeof ClipUpdateSchema>;

/** How the server chose a conversation type or role (§2.5): `inferred`, `auto_selected_single_option` or `default`. */
export const SELECTION_SOURCES = ['inferred', 'auto_selected_single_option', 'default'] as const;
/** Validates a `selection_source` value: one of {@link SELECTION_SOURCES}. */
export const SelectionSourceSchema = z.enum(SELECTION_SOURCES);

/**
 * Validates the payload (`pick`) of a `conversation_type` event (§2.5): the conversation
 * type the server picked and how (`selection_source`). A new pick replaces the previous
 * one (§3 rule 3). Infers {@link ConversationTypePick}.
 */
export const ConversationTypePickSchema = z.looseObject({
  conversation_type_uuid: z.string().min(1),
  name: z.string().optional(),
  confidence: Score01.nullable().optional(),
  selection_source: SelectionSourceSchema,
  detail: NullableString.optional(),
  reasoning: NullableString.optional(),
});
/** The server's current conversation-type pick, the payload of a `conversation_type` event (§2.5, §3 rule 3). */
export type ConversationTypePick = z.infer<typeof ConversationTypePickSchema>;

/**
 * Validates the payload (`pick`) of a `participant_role` event (§2.5): the role assigned to
 * one `speaker_label`. A later pick for the same speaker replaces the earlier one
 * (§3 rule 4). Infers {@link ParticipantRolePick}.
 */
export const ParticipantRolePickSchema = z.looseObject({
  speaker_label: z.string().min(1),
  participant_role_uuid: z.string().min(1).optional(),
  name: z.string().optional(),
  confidence: Score01.nullable().optional(),
  selection_source: SelectionSourceSchema.optional(),
  detail: NullableString.optional(),
  reasoning: NullableString.optional(),
});
/** A role assigned to one speaker, the payload of a `participant_role` event (§2.5, §3 rule 4). */
export type ParticipantRolePick = z.infer<typeof ParticipantRolePickSchema>;

/**
 * Validates the payload (`detection`) of a `behavior_detection` event (§2.5): a positive
 * detection of one configured behavior for one speaker, with evidence clips. Emitted at
 * most once per behavior and speaker, never withdrawn (§3 rule 5). Infers {@link BehaviorDetection}.
 */
export const BehaviorDetectionSchema = z.looseObject({
  behavior_uuid: z.string().min(1),
  behavior_name: z.string().optional(),
  speaker_label: NullableString.optional(),
  detected: z.boolean().optional(),
  confidence: Score01.nullable().optional(),
  evidence_clip_uuids: z.array(z.string()).optional(),
  definitive_clip_uuid: NullableString.optional(),
  reasoning: NullableString.optional(),
});
/** One behavior detected for one speaker, the payload of a `behavior_detection` event (§2.5, §3 rule 5). */
export type BehaviorDetection = z.infer<typeof BehaviorDetectionSchema>;

/**
 * Validates the payload of a `topic_sentiment` event (§2.5): one speaker's sentiment on one
 * topic, `sentiment_score` from -1.0 (most negative) to 1.0 (most positive). A later value
 * supersedes an earlier one for the same topic and speaker (§3 rule 6). Infers {@link TopicSentiment}.
 */
export const TopicSentimentSchema = z.looseObject({
  topic: z.string(),
  speaker_label: z.string(),
  sentiment_score: z.number().min(-1).max(1),
  sentiment_label: z.string().optional(),
});
/** One speaker's sentiment on one topic, the payload of a `topic_sentiment` event (§2.5, §3 rule 6). */
export type TopicSentiment = z.infer<typeof TopicSentimentSchema>;

/** Validates a nested `clip` event `{ type: 'clip', clip }` (§2.5). Infers {@link ClipEvent}. */
export const ClipEventSchema = z.looseObject({ type: z.literal('clip'), clip: ClipSchema });
/** Validates a nested `partial_clip` event `{ type: 'partial_clip', partial_clip }` (§2.5). Infers {@link PartialClipEvent}. */
export const PartialClipEventSchema = z.looseObject({ type: z.literal('partial_clip'), partial_clip: PartialClipSchema });
/** Validates a nested `clip_update` event `{ type: 'clip_update', clip_update }` (§2.5). Infers {@link ClipUpdateEvent}. */
export const ClipUpdateEventSchema = z.looseObject({ type: z.literal('clip_update'), clip_update: ClipUpdateSchema });
/** Validates a nested `conversation_type` event `{ type: 'conversation_type', pick }` (§2.5). Infers {@link ConversationTypeEvent}. */
export const ConversationTypeEventSchema = z.looseObject({ type: z.literal('conversation_type'), pick: ConversationTypePickSchema });
/** Validates a nested `participant_role` event `{ type: 'participant_role', pick }` (§2.5). Infers {@link ParticipantRoleEvent}. */
export const ParticipantRoleEventSchema = z.looseObject({ type: z.literal('participant_role'), pick: ParticipantRolePickSchema });
/** Validates a nested `behavior_detection` event `{ type: 'behavior_detection', detection }` (§2.5). Infers {@link BehaviorDetectionEvent}. */
export const BehaviorDetectionEventSchema = z.looseObject({ type: z.literal('behavior_detection'), detection: BehaviorDetectionSchema });
/** Validates a `topics` event: the full topic list, which replaces the previous one (§2.5, §3 rule 6). Infers {@link TopicsEvent}. */
export const TopicsEventSchema = z.looseObject({ type: z.literal('topics'), topics: z.array(z.string()) });
/** Validates a nested `topic_sentiment` event `{ type: 'topic_sentiment', topic_sentiment }` (§2.5). Infers {@link TopicSentimentEvent}. */
export const TopicSentimentEventSchema = z.looseObject({ type: z.literal('topic_sentiment'), topic_sentiment: TopicSentimentSchema });
/** Validates a `summary` event: the full summary `text` (null in some batch replies), replacing the previous one (§2.5, §3 rule 6). Infers {@link SummaryEvent}. */
export const SummaryEventSchema = z.looseObject({ type: z.literal('summary'), text: z.string().nullable() });
/** Validates the `done` event: total audio duration in `duration_ms`, sent last on a clean finish (§2.5, §3). Infers {@link DoneEvent}. */
export const DoneEventSchema = z.looseObject({ type: z.literal('done'), duration_ms: Ms });
/** Validates an `error` event: the server's description of a processing failure, sent before every close except 1000 (§2.5, §6). Infers {@link ErrorEvent}. */
export const ErrorEventSchema = z.looseObject({ type: z.literal('error'), error: z.string() });
/** A frame whose `type` this client does not know: passed through, never a failure. */
export const UnknownEventSchema = z.object({
  type: z.literal('unknown'),
  event_type: z.string(),
  data: z.record(z.string(), z.unknown()),
});

/**
 * Validates any server event of the conversation-analysis socket in its normalised nested
 * form, discriminated on `type` (§2.5, §6), including the client-side `unknown` kind.
 * Infers {@link ServerEvent}. To parse raw frames (flat or nested) use {@link parseServerEvent}.
 */
export const ServerEventSchema = z.discriminatedUnion('type', [
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
const SCALAR_TYPES = new Set(['topics', 'summary', 'done', 'error']);
const KNOWN_TYPES = new Set<string>([...Object.keys(PAYLOAD_KEY), ...SCALAR_TYPES]);

/** Outcome of {@link parseServerEvent}: the normalised event, or a `reason` naming the offending path. */
export type ParseResult =
  | { readonly ok: true; readonly event: ServerEvent }
  | { readonly ok: false; readonly reason: string };

/**
 * Normalise and validate one decoded JSON value. Never throws. Extra fields are kept; an
 * unknown `type` becomes an `unknown` event; a known type whose payload breaks the
 * contract is refused with a reason naming the path.
 */
export function parseServerEventValue(value: unknown): ParseResult {
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
  const parsed = ServerEventSchema.safeParse(candidate);
  if (parsed.success) return { ok: true, event: parsed.data };
  const issue = parsed.error.issues[0];
  const path = issue && issue.path.length > 0 ? issue.path.join('.') : '(root)';
  return { ok: false, reason: `${type} event: ${path}: ${issue?.message ?? 'invalid'}` };
}

/** Parse one text frame. Never throws. */
export function parseServerEvent(text: string): ParseResult {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { ok: false, reason: 'frame is not valid JSON' };
  }
  return parseServerEventValue(value);
}
