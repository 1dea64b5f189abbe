import type { OperatorFunction } from 'rxjs';
import type { BehaviorDetection, ServerEvent } from '../schema/events.js';
import type { OrderedMap } from '../state/OrderedMap.js';
import { behaviorsReducer, initialBehaviorsState } from '../state/behaviors.js';
import { foldState } from '../internal/fold.js';

/**
 * Behavior detections, at most one per behavior and speaker (ordering rule 5).
 *
 * - Emits an {@link OrderedMap} of detections keyed by `behaviorKey(behavior_uuid,
 *   speaker_label)`, in arrival order, each time a new detection arrives.
 * - A repeated detection for the same behavior and speaker is not applied and causes no
 *   emission (the reducer counts it in `BehaviorsState.duplicates`).
 * - Detections survive conversation-type and role changes, and are accepted after the end
 *   of audio until the source completes (the server sends `done` last).
 * - Completes and errors with the source.
 *
 * Cold: each subscription folds its own state. Emitted maps are immutable.
 *
 * ## Example
 * ```ts
 * import { from } from 'rxjs';
 * import type { ServerEvent } from 'svc-stream';
 * import { behaviorDetections } from 'svc-stream';
 *
 * const events: ServerEvent[] = [
 *   { type: 'behavior_detection', detection: { behavior_uuid: 'greeting', speaker_label: '1' } },
 *   { type: 'behavior_detection', detection: { behavior_uuid: 'greeting', speaker_label: '1' } },
 * ];
 * from(events)
 *   .pipe(behaviorDetections())
 *   .subscribe((detections) => console.log(detections.size));
 * // 1
 * ```
 */
export function behaviorDetections(): OperatorFunction<ServerEvent, OrderedMap<BehaviorDetection>> {
  return foldState(behaviorsReducer, initialBehaviorsState, (s) => s.detections);
}
