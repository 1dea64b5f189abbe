import type { OperatorFunction } from 'rxjs';
import type { ServerEvent, TopicSentiment } from '../schema/events.js';
import type { OrderedMap } from '../state/OrderedMap.js';
import { aggregatesReducer, initialAggregatesState } from '../state/aggregates.js';
import { foldState } from '../internal/fold.js';

/**
 * The latest sentiment per topic and speaker (ordering rule 6).
 *
 * - Emits an {@link OrderedMap} keyed by `sentimentKey(topic, speaker_label)`, in order of
 *   first arrival, each time a `topic_sentiment` arrives.
 * - A later sentiment for the same topic and speaker replaces the earlier one (same
 *   position); other pairs are untouched.
 * - Ignores every other event. Completes and errors with the source.
 *
 * Cold: each subscription folds its own state. Emitted maps are immutable.
 *
 * ## Example
 * ```ts
 * import { from } from 'rxjs';
 * import type { ServerEvent } from 'svc-stream';
 * import { topicSentiments } from 'svc-stream';
 *
 * const events: ServerEvent[] = [
 *   { type: 'topic_sentiment', topic_sentiment: { topic: 'refund', speaker_label: '2', sentiment_score: -0.6 } },
 *   { type: 'topic_sentiment', topic_sentiment: { topic: 'refund', speaker_label: '2', sentiment_score: 0.4 } },
 * ];
 * from(events)
 *   .pipe(topicSentiments())
 *   .subscribe((s) => console.log(s.toArray().map((t) => t.sentiment_score)));
 * // [-0.6]
 * // [0.4]
 * ```
 */
export function topicSentiments(): OperatorFunction<ServerEvent, OrderedMap<TopicSentiment>> {
  return foldState(aggregatesReducer, initialAggregatesState, (s) => s.topicSentiments);
}
