import type { OperatorFunction } from 'rxjs';
import type { ServerEvent } from '../schema/events.js';
import { aggregatesReducer, initialAggregatesState } from '../state/aggregates.js';
import { foldState } from '../internal/fold.js';

/**
 * The latest summary text (ordering rule 6).
 *
 * - Emits the text of each `summary` event that differs from the current summary; each
 *   fully replaces the previous one. A null text (the server had none) is emitted as null
 *   when it replaces a text.
 * - Emits nothing before the first summary; ignores every other event.
 * - Completes and errors with the source.
 *
 * Cold: each subscription folds its own state.
 *
 * ## Example
 * ```ts
 * import { from } from 'rxjs';
 * import type { ServerEvent } from 'svc-stream';
 * import { latestSummary } from 'svc-stream';
 *
 * const events: ServerEvent[] = [
 *   { type: 'summary', text: 'Customer asks for a refund.' },
 *   { type: 'summary', text: 'Customer asks for a refund; agent approves it.' },
 * ];
 * from(events)
 *   .pipe(latestSummary())
 *   .subscribe((text) => console.log(text));
 * // Customer asks for a refund.
 * // Customer asks for a refund; agent approves it.
 * ```
 */
export function latestSummary(): OperatorFunction<ServerEvent, string | null> {
  return foldState(aggregatesReducer, initialAggregatesState, (s) => s.summary);
}
