// The event schemas of the normalised nested form (the tolerant parser of raw frames is
// test/schema/parseServerEvent.test.ts's): what each kind requires, and that they keep
// fields they do not know.
import * as z from 'zod/mini';
import { describe, expect, it } from 'vitest';
import {
  ClipSchema,
  DoneEventSchema,
  ParticipantRolePickSchema,
  SELECTION_SOURCES,
  SelectionSourceSchema,
  ServerEventSchema,
  TopicSentimentSchema,
  UnknownEventSchema,
  type ServerEvent,
} from '../../src/schema/events.js';

const ok = (schema: z.ZodMiniType, value: unknown) => z.safeParse(schema, value).success;

const EVERY_KIND: ServerEvent[] = [
  { type: 'clip', clip: { clip_uuid: 'c1', text: 'Hi.', start_ms: 0, duration_ms: 900, speaker_label: '1' } },
  { type: 'partial_clip', partial_clip: { clip_uuid: 'c2', text: 'Hel', start_ms: 1000, end_ms: null, speaker_label: null } },
  { type: 'clip_update', clip_update: { clip_uuid: 'c1', emotion: 'Happy' } },
  { type: 'conversation_type', pick: { conversation_type_uuid: 't1', selection_source: 'inferred' } },
  { type: 'participant_role', pick: { speaker_label: '1', participant_role_uuid: 'r1' } },
  { type: 'behavior_detection', detection: { behavior_uuid: 'b1', speaker_label: '1', detected: true } },
  { type: 'topics', topics: ['billing'] },
  { type: 'topic_sentiment', topic_sentiment: { topic: 'billing', speaker_label: '1', sentiment_score: -0.4 } },
  { type: 'summary', text: null },
  { type: 'done', duration_ms: 1900 },
  { type: 'error', error: 'backend failed' },
  { type: 'unknown', event_type: 'heartbeat', data: { n: 1 } },
];

describe('ServerEventSchema', () => {
  it('accepts every kind of the nested form, and parses each to itself', () => {
    for (const e of EVERY_KIND) expect(z.parse(ServerEventSchema, e), e.type).toEqual(e);
  });

  it('keeps fields it does not know, at the top and in the payload', () => {
    const e = { type: 'clip', seq: 7, clip: { clip_uuid: 'c1', words: [] } };
    expect(z.parse(ServerEventSchema, e)).toEqual(e);
  });

  it('refuses a wrong discriminant or a payload under the wrong key', () => {
    expect(ok(ServerEventSchema, { type: 'clips', clip: { clip_uuid: 'c1' } })).toBe(false);
    expect(ok(ServerEventSchema, { type: 'clip', partial_clip: { clip_uuid: 'c1' } })).toBe(false);
    expect(ok(ServerEventSchema, { clip: { clip_uuid: 'c1' } })).toBe(false);
  });
});

describe('the payload schemas', () => {
  it('ids are non-empty strings; times whole non-negative milliseconds', () => {
    expect(ok(ClipSchema, { clip_uuid: '' })).toBe(false);
    expect(ok(ClipSchema, { clip_uuid: 'c', start_ms: -1 })).toBe(false);
    expect(ok(ClipSchema, { clip_uuid: 'c', duration_ms: 1.5 })).toBe(false);
    expect(ok(DoneEventSchema, { type: 'done', duration_ms: 0 })).toBe(true);
    expect(ok(ParticipantRolePickSchema, { speaker_label: '' })).toBe(false);
  });

  it('scores stay in their ranges: deepfake 0..1, sentiment -1..1', () => {
    expect(ok(ClipSchema, { clip_uuid: 'c', deepfake_score: 1.01 })).toBe(false);
    expect(ok(ClipSchema, { clip_uuid: 'c', deepfake_score: null })).toBe(true);
    expect(ok(TopicSentimentSchema, { topic: 't', speaker_label: '1', sentiment_score: -1 })).toBe(true);
    expect(ok(TopicSentimentSchema, { topic: 't', speaker_label: '1', sentiment_score: 1.5 })).toBe(false);
  });

  it('selection sources are the three of §2.5', () => {
    for (const s of SELECTION_SOURCES) expect(ok(SelectionSourceSchema, s)).toBe(true);
    expect(ok(SelectionSourceSchema, 'guessed')).toBe(false);
  });

  it('an unknown event holds the frame type, its data and, for a broken known type, why', () => {
    expect(ok(UnknownEventSchema, { type: 'unknown', event_type: 'clip', data: {}, reason: 'clip.clip_uuid: required' })).toBe(true);
    expect(ok(UnknownEventSchema, { type: 'unknown', data: {} })).toBe(false);
  });
});
