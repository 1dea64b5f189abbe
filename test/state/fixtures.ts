// Event builders shared by the state and operator tests: the nested wire form, with only
// the fields a test cares about.
import type { ServerEvent } from 'svc-stream';

type Fields = Record<string, unknown>;

export const ev = {
  partial: (clip_uuid: string, fields: Fields = {}): ServerEvent =>
    ({ type: 'partial_clip', partial_clip: { clip_uuid, ...fields } }) as ServerEvent,
  clip: (clip_uuid: string, fields: Fields = {}): ServerEvent =>
    ({ type: 'clip', clip: { clip_uuid, ...fields } }) as ServerEvent,
  update: (clip_uuid: string, fields: Fields = {}): ServerEvent =>
    ({ type: 'clip_update', clip_update: { clip_uuid, ...fields } }) as ServerEvent,
  type: (conversation_type_uuid: string, fields: Fields = {}): ServerEvent =>
    ({ type: 'conversation_type', pick: { conversation_type_uuid, selection_source: 'inferred', ...fields } }) as ServerEvent,
  role: (speaker_label: string, name: string, fields: Fields = {}): ServerEvent =>
    ({ type: 'participant_role', pick: { speaker_label, name, ...fields } }) as ServerEvent,
  behavior: (behavior_uuid: string, speaker_label: string | null, fields: Fields = {}): ServerEvent =>
    ({ type: 'behavior_detection', detection: { behavior_uuid, speaker_label, detected: true, ...fields } }) as ServerEvent,
  topics: (...topics: string[]): ServerEvent => ({ type: 'topics', topics }),
  sentiment: (topic: string, speaker_label: string, sentiment_score: number): ServerEvent =>
    ({ type: 'topic_sentiment', topic_sentiment: { topic, speaker_label, sentiment_score } }),
  summary: (text: string | null): ServerEvent => ({ type: 'summary', text }),
  done: (duration_ms: number): ServerEvent => ({ type: 'done', duration_ms }),
  error: (error: string): ServerEvent => ({ type: 'error', error }),
  unknown: (event_type: string): ServerEvent => ({ type: 'unknown', event_type, data: {} }),
};
