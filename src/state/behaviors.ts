// Ordering rule 5 (§3): behavior detections, at most one per behavior and speaker, kept
// through type and role changes and accepted until `done`.
import type { BehaviorDetection, ServerEvent } from '../schema/events.js';
import { OrderedMap } from './OrderedMap.js';

/** Behavior detections by behavior and speaker, never withdrawn (§3 rule 5), plus a count of repeated detections. */
export interface BehaviorsState {
  /** Detections keyed by {@link behaviorKey}, in arrival order. Never withdrawn. */
  readonly detections: OrderedMap<BehaviorDetection>;
  /** Detections repeated for a (behavior, speaker) already detected: counted, not applied. */
  readonly duplicates: number;
}

/** The behaviors state before any event: no detections. Seed for {@link behaviorsReducer}. */
export const initialBehaviorsState: BehaviorsState = {
  detections: OrderedMap.empty(),
  duplicates: 0,
};

/**
 * The key of one detection: behavior and speaker. A null or absent speaker (a
 * conversation-level detection) is its own key, distinct from every speaker label.
 */
export function behaviorKey(behaviorUuid: string, speakerLabel: string | null | undefined): string {
  return speakerLabel == null ? `${behaviorUuid}\u0000` : `${behaviorUuid}\u0000${speakerLabel}\u0000`;
}

/**
 * Apply one event to the behaviors state. Pure; an event this reducer does not handle
 * returns the same state object.
 *
 * - `behavior_detection`: recorded once per (behavior_uuid, speaker_label); a repeat keeps
 *   the first detection and increments `duplicates`.
 * - `conversation_type` and `participant_role` do not touch detections (rule 5).
 * - Detections after end of audio are applied like any other: the fold runs until `done`.
 */
export function behaviorsReducer(state: BehaviorsState, event: ServerEvent): BehaviorsState {
  if (event.type !== 'behavior_detection') return state;
  const detection = event.detection;
  const key = behaviorKey(detection.behavior_uuid, detection.speaker_label);
  if (state.detections.has(key)) return { ...state, duplicates: state.duplicates + 1 };
  return { ...state, detections: state.detections.set(key, detection) };
}
