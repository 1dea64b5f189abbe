// stateJson: the whole derived state as plain JSON, keyed by the wire names.
import { describe, expect, it } from 'vitest';
import type { ServerEvent } from '../../src/schema/events.js';
import { initialConversationSnapshot, snapshotReducer } from '../../src/state/snapshot.js';
import { stateJson } from '../../src/state/stateJson.js';

describe('stateJson', () => {
  it('is empty for the initial snapshot', () => {
    expect(stateJson(initialConversationSnapshot)).toEqual({
      type: 'state',
      conversation_type: null,
      roles: {},
      topics: [],
      summary: null,
      topic_sentiments: [],
      behaviors: [],
      clips: [],
      duration_ms: null,
    });
  });

  it('keys roles by speaker, keeps clips and sentiments in order, and survives JSON as is', () => {
    const events: ServerEvent[] = [
      { type: 'clip', clip: { clip_uuid: 'a', text: 'Hello.', speaker_label: '1' } },
      { type: 'conversation_type', pick: { conversation_type_uuid: 't', selection_source: 'inferred' } },
      { type: 'participant_role', pick: { speaker_label: '1', name: 'Agent' } },
      { type: 'topics', topics: ['billing'] },
      { type: 'topic_sentiment', topic_sentiment: { topic: 'billing', speaker_label: '1', sentiment_score: -0.5 } },
      { type: 'behavior_detection', detection: { behavior_uuid: 'b', speaker_label: '1' } },
      { type: 'summary', text: 'A call.' },
      { type: 'done', duration_ms: 1200 },
    ];
    const json = stateJson(events.reduce(snapshotReducer, initialConversationSnapshot));
    expect(json).toMatchObject({
      conversation_type: { conversation_type_uuid: 't' },
      roles: { '1': { speaker_label: '1', name: 'Agent' } },
      topics: ['billing'],
      summary: 'A call.',
      topic_sentiments: [{ topic: 'billing', sentiment_score: -0.5 }],
      behaviors: [{ behavior_uuid: 'b' }],
      clips: [{ clip_uuid: 'a' }],
      duration_ms: 1200,
    });
    expect(JSON.parse(JSON.stringify(json))).toEqual(json);
  });
});
