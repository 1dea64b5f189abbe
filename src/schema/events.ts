// Server events of the conversation-analysis socket (§2.5, wire reference): the schemas of
// the normalised nested form and the types inferred from them. Raw frames (nested or flat,
// in contract or not) go through the tolerant parser, src/schema/parseServerEvent.ts.
// Written with zod/mini (functions instead of methods): a page bundling the browser entry
// carries only the zod it uses here, and none when it imports no schema (docs/browser.md).
// Every export is public (the schema and browser entries export this module whole).
import * as z from 'zod/mini';
import { looseObject } from './looseObject.js';
import { eventUnion } from './eventUnion.js';

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
 * The schema of each known kind of event (§6), keyed by its `type`, as delivered: the one list
 * of the eleven kinds. {@link ServerEventSchema} is made of it, and so is the parser's check of
 * the contract's narrower shapes (two of them replaced): the union is written once.
 */
export const SERVER_EVENT_SCHEMAS = {
  clip: ClipEventSchema,
  partial_clip: PartialClipEventSchema,
  clip_update: ClipUpdateEventSchema,
  conversation_type: ConversationTypeEventSchema,
  participant_role: ParticipantRoleEventSchema,
  behavior_detection: BehaviorDetectionEventSchema,
  topics: TopicsEventSchema,
  topic_sentiment: TopicSentimentEventSchema,
  summary: SummaryEventSchema,
  done: DoneEventSchema,
  error: ErrorEventSchema,
} as const;

/**
 * Validates any server event of the conversation-analysis socket in its normalised nested
 * form, discriminated on `type` (§2.5, §6), including the client-side `unknown` kind.
 * Infers {@link ServerEvent}. To parse raw frames (flat or nested) use {@link parseServerEvent}.
 */
export const ServerEventSchema = /* @__PURE__ */ eventUnion(SERVER_EVENT_SCHEMAS, { unknown: UnknownEventSchema });
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
