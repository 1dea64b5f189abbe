// The events the emulator's engines send, typed from the client's schemas (src/schema/events.ts)
// so the compiler catches drift between what the emulator sends and what the client parses.
import type {
  BehaviorDetection,
  Clip,
  ClipUpdate,
  ConversationTypePick,
  ParticipantRolePick,
  PartialClip,
  ServerEvent,
  TopicSentiment,
  UnknownEvent,
} from '../schema/events.js';

/** A payload type without the index signature of a loose schema: only the fields the schema names. */
type Named<T> = { [K in keyof T as string extends K ? never : number extends K ? never : K]: T[K] };

/**
 * Every field the client's schema names, present and defined: the wire reference shows every
 * field on every event, and a field the schema gains or renames stops the emulator compiling.
 */
export type Complete<T> = { [K in keyof Named<T>]-?: Exclude<Named<T>[K], undefined> };

/** Proof that an emitted shape is one of the client's known events (not `unknown`). */
type Conforms<T extends Exclude<ServerEvent, UnknownEvent>> = T;

export type ClipWireEvent = Conforms<{ type: 'clip'; clip: Complete<Clip> }>;
export type PartialClipWireEvent = Conforms<{ type: 'partial_clip'; partial_clip: Complete<PartialClip> }>;
/** Refinements carry only the fields the config turned on (wire reference), so this one is not complete. */
export type ClipUpdateWireEvent = Conforms<{ type: 'clip_update'; clip_update: Named<ClipUpdate> }>;
export type ConversationTypeWireEvent = Conforms<{ type: 'conversation_type'; pick: Complete<ConversationTypePick> }>;
export type ParticipantRoleWireEvent = Conforms<{ type: 'participant_role'; pick: Complete<ParticipantRolePick> }>;
export type BehaviorDetectionWireEvent = Conforms<{ type: 'behavior_detection'; detection: Complete<BehaviorDetection> }>;
export type TopicsWireEvent = Conforms<{ type: 'topics'; topics: string[] }>;
export type TopicSentimentWireEvent = Conforms<{ type: 'topic_sentiment'; topic_sentiment: Complete<TopicSentiment> }>;
export type SummaryWireEvent = Conforms<{ type: 'summary'; text: string | null }>;
export type DoneWireEvent = Conforms<{ type: 'done'; duration_ms: number }>;
export type ErrorWireEvent = Conforms<{ type: 'error'; error: string }>;

/** The conversation-analysis events an engine sends (`done` and `error` come from the connection). */
export type ConversationWireEvent =
  | ClipWireEvent
  | PartialClipWireEvent
  | ClipUpdateWireEvent
  | ConversationTypeWireEvent
  | ParticipantRoleWireEvent
  | BehaviorDetectionWireEvent
  | TopicsWireEvent
  | TopicSentimentWireEvent
  | SummaryWireEvent;

// The PII-redaction and synthetic-voice streams have no event shapes in the wire reference and
// no client schema: these are the emulator's own shapes (docs/emulator.md), typed here.

/** One redacted utterance of the PII/PHI redaction stream. */
export interface RedactedSegmentWireEvent {
  type: 'redacted_segment';
  segment: {
    segment_uuid: string;
    start_ms: number;
    duration_ms: number;
    speaker_label: string;
    text: string;
    entities: Array<{ label: string; start: number; end: number }>;
  };
}

/** One window of the synthetic-voice detection stream. */
export interface SyntheticVoiceWireEvent {
  type: 'synthetic_voice';
  window: { start_ms: number; duration_ms: number; speech_ms: number; score: number | null };
}

declare const verbatim: unique symbol;

/**
 * A timeline event the engine does not model (an unknown type, a hand-made clip), sent exactly
 * as the scenario wrote it. Untyped on purpose: scenarios may script what no client knows.
 */
export type VerbatimEvent = Readonly<Record<string, unknown>> & { readonly [verbatim]: true };

/** Mark a scenario-written event as deliberately sent unchecked. */
export function verbatimEvent(event: Record<string, unknown>): VerbatimEvent {
  return event as VerbatimEvent;
}

/** Everything an engine may send. */
export type EngineEvent = ConversationWireEvent | RedactedSegmentWireEvent | SyntheticVoiceWireEvent | VerbatimEvent;
