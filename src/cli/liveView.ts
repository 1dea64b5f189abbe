// How `analyze` shows a session: a redrawn panel on a terminal, plain lines when piped.
import type { ServerEvent } from '../schema/events.js';
import type { ConversationSnapshot } from '../state/snapshot.js';
import type { SessionStats } from '../session/stats.js';

const MAX_CLIPS = 8;

/** A clip's text, or a note that it has none (the emulator never invents a transcript). */
function textOf(c: { text?: string | undefined; duration_ms?: number | undefined }): string {
  if (c.text) return c.text;
  return c.duration_ms !== undefined ? `(no transcript, ${(c.duration_ms / 1000).toFixed(1)} s)` : '(no transcript)';
}

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

/** The full panel for a terminal, redrawn on every change. */
export function panel(s: ConversationSnapshot, stats: SessionStats, width: number): string {
  const cut = (t: string): string => (t.length > width ? `${t.slice(0, width - 1)}…` : t);
  const lines: string[] = [];
  const type = s.conversation.type;
  lines.push(`svc-stream analyze — ${stats.phase}   sent ${(stats.bytesSent / 1024).toFixed(0)} KiB`);
  lines.push(`type:      ${type ? `${type.name ?? type.conversation_type_uuid} (${type.selection_source})` : '—'}`);
  const roles = [...s.conversation.roles].map((r) => `${r.speaker_label}=${r.name ?? r.participant_role_uuid ?? '?'}`);
  lines.push(`roles:     ${roles.join('  ') || '—'}`);
  lines.push(`topics:    ${s.aggregates.topics?.join(', ') || '—'}`);
  const sents = [...s.aggregates.topicSentiments].map((t) => `${t.topic}/${t.speaker_label} ${t.sentiment_score >= 0 ? '+' : ''}${t.sentiment_score.toFixed(2)}`);
  lines.push(`sentiment: ${sents.join('  ') || '—'}`);
  const behaviors = [...s.behaviors.detections].map((b) => `${b.behavior_name ?? b.behavior_uuid}(${b.speaker_label ?? '-'})`);
  lines.push(`behaviors: ${behaviors.join('  ') || '—'}`);
  lines.push(`summary:   ${s.aggregates.summary ?? '—'}`);
  if (s.aggregates.audioDurationMs !== null) lines.push(`duration:  ${(s.aggregates.audioDurationMs / 1000).toFixed(1)} s`);
  lines.push('');
  const entries = [...s.clips.transcript];
  for (const entry of entries.slice(-MAX_CLIPS)) {
    const c = entry.clip;
    const mark = entry.status === 'partial' ? '…' : ' ';
    lines.push(`${mark} ${speaker(s, c.speaker_label)}: ${entry.status === 'final' ? textOf(c) : c.text ?? ''}${c.emotion ? ` <${c.emotion}>` : ''}`);
  }
  return lines.map(cut).join('\n');
}
