// The whole derived state as plain JSON: what `analyze --json` prints last and what the
// dashboard sends to a page. Keys follow the wire names.
import type { ConversationSnapshot } from './snapshot.js';

export interface StateJson {
  readonly type: 'state';
  readonly conversation_type: unknown;
  readonly roles: Record<string, unknown>;
  readonly topics: readonly string[];
  readonly summary: string | null;
  readonly topic_sentiments: readonly unknown[];
  readonly behaviors: readonly unknown[];
  readonly clips: readonly unknown[];
  readonly duration_ms: number | null;
}

export function stateJson(s: ConversationSnapshot): StateJson {
  const roles: Record<string, unknown> = {};
  for (const pick of s.conversation.roles) roles[pick.speaker_label] = pick;
  return {
    type: 'state',
    conversation_type: s.conversation.type,
    roles,
    topics: s.aggregates.topics ?? [],
    summary: s.aggregates.summary,
    topic_sentiments: [...s.aggregates.topicSentiments],
    behaviors: [...s.behaviors.detections],
    clips: [...s.clips.clips],
    duration_ms: s.aggregates.audioDurationMs,
  };
}
