import { filter, type OperatorFunction } from 'rxjs';
import type { ServerEvent } from '../schema/events.js';
import { aggregatesReducer, initialAggregatesState } from '../state/aggregates.js';
import { foldState, isSet } from '../internal/fold.js';

/**
 * The total audio duration in milliseconds, from the `done` event.
 *
 * - Emits `duration_ms` once, when `done` arrives (again only if a later `done` differed).
 * - Emits nothing for any other event; a session that errors before `done` emits nothing.
 * - Completes and errors with the source.
 *
 * Cold: each subscription folds its own state.
 *
 * ## Example
 * ```ts
 * import { from } from 'rxjs';
 * import type { ServerEvent } from 'svc-stream';
 * import { audioDuration } from 'svc-stream';
 *
 * const events: ServerEvent[] = [{ type: 'summary', text: 'Short call.' }, { type: 'done', duration_ms: 61_500 }];
 * from(events)
 *   .pipe(audioDuration())
 *   .subscribe((ms) => console.log(`${ms / 1000} s`));
 * // 61.5 s
 * ```
 */
export function audioDuration(): OperatorFunction<ServerEvent, number> {
  return (source) =>
    source.pipe(foldState(aggregatesReducer, initialAggregatesState, (s) => s.audioDurationMs), filter(isSet));
}
