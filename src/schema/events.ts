// Server events of the conversation-analysis socket (§2.5, wire reference). Frames arrive
// nested (`{type, clip: {...}}`) or flat (fields beside `type`); both normalise to nested.
import { z } from 'zod';

const Ms = z.number().int().min(0);
const Score01 = z.number().min(0).max(1);
const NullableString = z.string().nullable();

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
export type Clip = z.infer<typeof ClipSchema>;

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
export type PartialClip = z.infer<typeof PartialClipSchema>;

export const ClipUpdateSchema = z.looseObject({
  clip_uuid: z.string().min(1),
  emotion: NullableString.optional(),
  accent: NullableString.optional(),
});
export type ClipUpdate = z.infer<typeof ClipUpdateSchema>;

export const SELECTION_SOURCES = ['inferred', 'auto_selected_single_option', 'default'] as const;
export const SelectionSourceSchema = z.enum(SELECTION_SOURCES);

export const ConversationTypePickSchema = z.looseObject({
  conversation_type_uuid: z.string().min(1),
  name: z.string().optional(),
  confidence: Score01.nullable().optional(),
  selection_source: SelectionSourceSchema,
  detail: NullableString.optional(),
  reasoning: NullableString.optional(),
});
export type ConversationTypePick = z.infer<typeof ConversationTypePickSchema>;

export const ParticipantRolePickSchema = z.looseObject({
  speaker_label: z.string().min(1),
  participant_role_uuid: z.string().min(1).optional(),
  name: z.string().optional(),
  confidence: Score01.nullable().optional(),
  selection_source: SelectionSourceSchema.optional(),
  detail: NullableString.optional(),
  reasoning: NullableString.optional(),
});
export type ParticipantRolePick = z.infer<typeof ParticipantRolePickSchema>;

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
export type BehaviorDetection = z.infer<typeof BehaviorDetectionSchema>;

export const TopicSentimentSchema = z.looseObject({
  topic: z.string(),
  speaker_label: z.string(),
  sentiment_score: z.number().min(-1).max(1),
  sentiment_label: z.string().optional(),
});
export type TopicSentiment = z.infer<typeof TopicSentimentSchema>;

export const ClipEventSchema = z.looseObject({ type: z.literal('clip'), clip: ClipSchema });
export const PartialClipEventSchema = z.looseObject({ type: z.literal('partial_clip'), partial_clip: PartialClipSchema });
export const ClipUpdateEventSchema = z.looseObject({ type: z.literal('clip_update'), clip_update: ClipUpdateSchema });
export const ConversationTypeEventSchema = z.looseObject({ type: z.literal('conversation_type'), pick: ConversationTypePickSchema });
export const ParticipantRoleEventSchema = z.looseObject({ type: z.literal('participant_role'), pick: ParticipantRolePickSchema });
export const BehaviorDetectionEventSchema = z.looseObject({ type: z.literal('behavior_detection'), detection: BehaviorDetectionSchema });
export const TopicsEventSchema = z.looseObject({ type: z.literal('topics'), topics: z.array(z.string()) });
export const TopicSentimentEventSchema = z.looseObject({ type: z.literal('topic_sentiment'), topic_sentiment: TopicSentimentSchema });
export const SummaryEventSchema = z.looseObject({ type: z.literal('summary'), text: z.string().nullable() });
export const DoneEventSchema = z.looseObject({ type: z.literal('done'), duration_ms: Ms });
export const ErrorEventSchema = z.looseObject({ type: z.literal('error'), error: z.string() });
/** A frame whose `type` this client does not know: passed through, never a failure. */
export const UnknownEventSchema = z.object({
  type: z.literal('unknown'),
  event_type: z.string(),
  data: z.record(z.string(), z.unknown()),
});

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
export type ServerEvent = z.infer<typeof ServerEventSchema>;
export type ServerEventType = ServerEvent['type'];
export type EventOf<T extends ServerEventType> = Extract<ServerEvent, { type: T }>;

export type ClipEvent = EventOf<'clip'>;
export type PartialClipEvent = EventOf<'partial_clip'>;
export type ClipUpdateEvent = EventOf<'clip_update'>;
export type ConversationTypeEvent = EventOf<'conversation_type'>;
export type ParticipantRoleEvent = EventOf<'participant_role'>;
export type BehaviorDetectionEvent = EventOf<'behavior_detection'>;
export type TopicsEvent = EventOf<'topics'>;
export type TopicSentimentEvent = EventOf<'topic_sentiment'>;
export type SummaryEvent = EventOf<'summary'>;
export type DoneEvent = EventOf<'done'>;
export type ErrorEvent = EventOf<'error'>;
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
