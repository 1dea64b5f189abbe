// How `analyze` and `rtp` show a session off a terminal: one plain line per event (the
// terminal view is in terminalView.ts).
import type { ServerEvent } from '../schema/events.js';
import type { ConversationSnapshot } from '../state/snapshot.js';
import { textOf } from './terminalView.js';


function speaker(s: ConversationSnapshot, label: string | null | undefined): string {
  if (label == null) return '?';
  const role = s.conversation.roles.get(label);
  return role?.name ? `${label} (${role.name})` : label;
}

/** One plain line for an event, or undefined for events not worth a line (partials). */
export function eventLine(e: ServerEvent, s: ConversationSnapshot): string | undefined {
  switch (e.type) {
    case 'clip': {
      const c = e.clip;
      const at = c.start_ms !== undefined ? `[${(c.start_ms / 1000).toFixed(1).padStart(6)}s] ` : '';
      const emo = c.emotion ? ` <${c.emotion}>` : '';
      return `${at}${speaker(s, c.speaker_label)}: ${textOf(c)}${emo}`;
    }
    case 'partial_clip':
      return undefined;
    case 'clip_update':
      return `  update ${e.clip_update.clip_uuid}: ${Object.entries(e.clip_update).filter(([k]) => k !== 'clip_uuid').map(([k, v]) => `${k}=${String(v)}`).join(' ')}`;
    case 'conversation_type':
      return `conversation type: ${e.pick.name ?? e.pick.conversation_type_uuid} (${e.pick.selection_source})`;
    case 'participant_role':
      return `role: speaker ${e.pick.speaker_label} is ${e.pick.name ?? e.pick.participant_role_uuid ?? '?'}`;
    case 'behavior_detection':
      return `behavior: ${e.detection.behavior_name ?? e.detection.behavior_uuid} by speaker ${e.detection.speaker_label ?? '-'}`;
    case 'topics':
      return `topics: ${e.topics.join(', ') || '(none)'}`;
    case 'topic_sentiment':
      return `sentiment: ${e.topic_sentiment.topic} / speaker ${e.topic_sentiment.speaker_label}: ${e.topic_sentiment.sentiment_score.toFixed(2)}${e.topic_sentiment.sentiment_label ? ` (${e.topic_sentiment.sentiment_label})` : ''}`;
    case 'summary':
      return `summary: ${e.text ?? '(none)'}`;
    case 'done':
      return `done: ${(e.duration_ms / 1000).toFixed(1)} s of audio`;
    case 'error':
      return `error: ${e.error}`;
    case 'unknown':
      return `(unknown event ${e.event_type})`;
  }
}
