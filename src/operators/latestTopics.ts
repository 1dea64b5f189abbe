import { filter, type OperatorFunction } from 'rxjs';
import type { ServerEvent } from '../schema/events.js';
import { aggregatesReducer, initialAggregatesState } from '../state/aggregates.js';
import { foldState, isSet } from '../internal/fold.js';

/**
 * The latest topics list (ordering rule 6).
 *
 * - Emits the frozen list of each `topics` event that differs from the current list.
 * - Each list fully replaces the previous one, never merged: topics may disappear.
 * - Emits nothing before the first `topics`; ignores every other event.
 * - Completes and errors with the source.
 *
 * Cold: each subscription folds its own state.
 *
 * ## Example
 * ```ts
 * import { from } from 'rxjs';
 * import type { ServerEvent } from 'svc-stream';
 * import { latestTopics } from 'svc-stream';
 *
 * const events: ServerEvent[] = [
 *   { type: 'topics', topics: ['billing', 'refund', 'delivery'] },
 *   { type: 'topics', topics: ['refund'] },
 * ];
 * from(events)
 *   .pipe(latestTopics())
 *   .subscribe((topics) => console.log(topics));
 * // ['billing', 'refund', 'delivery']
 * // ['refund']
 * ```
 */
export function latestTopics(): OperatorFunction<ServerEvent, readonly string[]> {
  return (source) =>
    source.pipe(foldState(aggregatesReducer, initialAggregatesState, (s) => s.topics), filter(isSet));
}
