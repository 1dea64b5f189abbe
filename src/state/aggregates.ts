// Ordering rule 6 (§3) and `done`: the latest topics, summary and per-speaker topic
// sentiments, each replaced wholesale by its newer event, plus the total audio duration.
import type { ServerEvent, TopicSentiment } from '../schema/events.js';
import { OrderedMap } from './OrderedMap.js';

/** Topics, summary and per-speaker topic sentiments, each replaced wholesale by its newer event (§3 rule 6), plus the total duration from `done`. */
export interface AggregatesState {
  /** The latest `topics` list, frozen; null until the first one. May shrink. */
  readonly topics: readonly string[] | null;
  /** The latest summary text; null until the first one (or when the latest was null). */
  readonly summary: string | null;
  /** Latest sentiment per {@link sentimentKey} (topic, speaker), in first-arrival order. */
  readonly topicSentiments: OrderedMap<TopicSentiment>;
  /** Total audio duration from `done`; null until it arrives. */
  readonly audioDurationMs: number | null;
}

/** The aggregates state before any event: nothing known yet. Seed for {@link aggregatesReducer}. */
export const initialAggregatesState: AggregatesState = {
  topics: null,
  summary: null,
  topicSentiments: OrderedMap.empty(),
  audioDurationMs: null,
};

/** The key of one topic sentiment: topic and speaker. */
export function sentimentKey(topic: string, speakerLabel: string): string {
  return `${topic}\u0000${speakerLabel}`;
}

/**
 * Apply one event to the aggregates state. Pure; an event this reducer does not handle,
 * or one that repeats the current value, returns the same state object.
 *
 * - `topics`: replaces the list (never merged, so topics may disappear).
 * - `summary`: replaces the summary.
 * - `topic_sentiment`: replaces the sentiment of its (topic, speaker).
 * - `done`: records `duration_ms` as the audio duration.
 */
export function aggregatesReducer(state: AggregatesState, event: ServerEvent): AggregatesState {
  switch (event.type) {
    case 'topics':
      if (state.topics !== null && sameList(state.topics, event.topics)) return state;
      return { ...state, topics: Object.freeze(event.topics.slice()) };
    case 'summary':
      return state.summary === event.text ? state : { ...state, summary: event.text };
    case 'topic_sentiment': {
      const s = event.topic_sentiment;
      return { ...state, topicSentiments: state.topicSentiments.set(sentimentKey(s.topic, s.speaker_label), s) };
    }
    case 'done':
      return state.audioDurationMs === event.duration_ms ? state : { ...state, audioDurationMs: event.duration_ms };
    default:
      return state;
  }
}

function sameList(a: readonly string[], b: readonly string[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}
