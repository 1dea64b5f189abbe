// What the supervisor's page shows of each call of the fleet: a small fold of its events
// (roles, the latest emotion, behaviors, how much audio) beside what the directory says
// (status, title, times). Pure reducers and one pure view function, tested without I/O.
import type { FleetCall } from '../schema/fleetCall.js';
import type { ServerEvent } from '../schema/events.js';
import type { ResultLabel } from '../schema/resultLabel.js';
import { behaviorsReducer, initialBehaviorsState, type BehaviorsState } from '../state/behaviors.js';
import { conversationReducer, initialConversationState, type ConversationState } from '../state/conversation.js';

/** How many of a call's latest behaviors the page is sent. */
export const FLEET_BEHAVIORS = 5;
/** Clips whose speaker is remembered, to name the speaker of a later `clip_update`'s emotion. */
const CLIP_SPEAKERS = 64;

/** A call's events folded for the supervisor: roles, behaviors, the latest emotion, the audio reached. */
export interface CallFold {
  readonly conversation: ConversationState;
  readonly behaviors: BehaviorsState;
  /** The emotion of the latest clip that has one (its refinements included), with its speaker. */
  readonly emotion: { readonly speaker: string | null; readonly emotion: string } | null;
  /** The clip `emotion` is of. */
  readonly emotionClip: string | null;
  /** The speakers of the latest clips, oldest first. */
  readonly clipSpeakers: readonly (readonly [string, string | null])[];
  readonly audioMs: number | null;
  readonly events: number;
}

/** The fold before any event. */
export const initialCallFold: CallFold = {
  conversation: initialConversationState,
  behaviors: initialBehaviorsState,
  emotion: null,
  emotionClip: null,
  clipSpeakers: [],
  audioMs: null,
  events: 0,
};

/**
 * Apply one event to a call's fold. Pure. Roles and behaviors follow the session's own
 * reducers (§3 rules 3-5); the emotion is the latest clip's: a `clip` with one sets it, and a
 * `clip_update` changes it only for that clip or a later one (a late refinement of an earlier
 * clip does not hide the latest); the audio reached is the `done` duration, else the end of the
 * latest clip.
 */
export function callFoldReducer(state: CallFold, event: ServerEvent): CallFold {
  const conversation = conversationReducer(state.conversation, event);
  const behaviors = behaviorsReducer(state.behaviors, event);
  let { emotion, emotionClip, clipSpeakers, audioMs } = state;
  if (event.type === 'clip') {
    const c = event.clip;
    const speaker = c.speaker_label ?? null;
    clipSpeakers = [...clipSpeakers.filter(([u]) => u !== c.clip_uuid).slice(-(CLIP_SPEAKERS - 1)), [c.clip_uuid, speaker] as const];
    if (typeof c.emotion === 'string' && c.emotion !== '') {
      emotion = { speaker, emotion: c.emotion };
      emotionClip = c.clip_uuid;
    }
    if (c.start_ms !== undefined && c.duration_ms !== undefined) audioMs = Math.max(audioMs ?? 0, c.start_ms + c.duration_ms);
  } else if (event.type === 'clip_update' && typeof event.clip_update.emotion === 'string' && event.clip_update.emotion !== '') {
    const uuid = event.clip_update.clip_uuid;
    const at = clipSpeakers.findIndex(([u]) => u === uuid);
    // A clip this fold does not remember is older than every clip it does: not the latest.
    if (at >= 0 && at >= clipSpeakers.findIndex(([u]) => u === emotionClip)) {
      emotion = { speaker: clipSpeakers[at]![1], emotion: event.clip_update.emotion };
      emotionClip = uuid;
    }
  } else if (event.type === 'done' && typeof event.duration_ms === 'number') {
    audioMs = event.duration_ms;
  }
  return { conversation, behaviors, emotion, emotionClip, clipSpeakers, audioMs, events: state.events + 1 };
}

/** What the directory says of a call (see the relay's listing). */
export interface FleetCallInfo {
  readonly id: string;
  readonly title: string;
  readonly status: string;
  readonly ended: boolean;
  readonly stale: boolean;
  readonly startedAt?: number | undefined;
  readonly endedAt?: number | undefined;
  readonly error?: { readonly code: string; readonly message: string } | undefined;
  /** What made its results, once its publisher said. */
  readonly label?: ResultLabel | undefined;
}

/** The page's view of one call: the directory's facts and the fold. Pure. */
export function fleetCall(info: FleetCallInfo, fold: CallFold, partial: boolean): FleetCall {
  const detections = [...fold.behaviors.detections];
  return {
    id: info.id,
    title: info.title,
    status: info.status,
    ended: info.ended,
    stale: info.stale,
    startedAt: info.startedAt ?? null,
    endedAt: info.endedAt ?? null,
    audioMs: fold.audioMs,
    events: fold.events,
    conversationType: fold.conversation.type?.name ?? null,
    roles: [...fold.conversation.roles].map((r) => ({ speaker: r.speaker_label, role: r.name ?? r.participant_role_uuid ?? 'assigned' })),
    emotion: fold.emotion,
    behaviors: detections.slice(-FLEET_BEHAVIORS).map((d) => ({ name: d.behavior_name ?? d.behavior_uuid, speaker: d.speaker_label ?? null })),
    behaviorCount: detections.length,
    partial,
    error: info.error ? { code: info.error.code, message: info.error.message } : null,
    label: info.label ?? null,
  };
}

export { FleetCallSchema, type FleetCall } from '../schema/fleetCall.js';
