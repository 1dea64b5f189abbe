// Ordering rules 1-2 (§3): partial clips grow under one clip_uuid, the final `clip`
// replaces them, and `clip_update`s refine final clips field by field.
// Clips live in persistent OrderedMaps: an event costs O(log n) and never copies the clip
// list, so a fold is linear in the session, and every earlier state stays intact.
import type { Clip, ClipUpdate, PartialClip, ServerEvent } from '../schema/events.js';
import { appendAbsent, OrderedMap } from './OrderedMap.js';
import { DEFAULT_MAX_PENDING_UPDATES, PendingUpdates } from './pendingUpdates.js';

/** One line of the live transcript: an utterance still in progress, or a final clip. */
export type TranscriptEntry =
  | { readonly status: 'partial'; readonly clip: PartialClip }
  | { readonly status: 'final'; readonly clip: Clip };

/** Clips and the live transcript (§3 rules 1-2): final clips with their updates applied, partials in order of first appearance, and counters of out-of-order events. */
export interface ClipsState {
  /**
   * Final clips with every `clip_update` applied, keyed by `clip_uuid`, in the order their
   * `clip` events arrived.
   */
  readonly clips: OrderedMap<Clip>;
  /**
   * Partial and final clips keyed by `clip_uuid`, in order of FIRST APPEARANCE of the
   * uuid (its first `partial_clip`, or its `clip` when it had none). Not `start_ms`:
   * that field is optional, and sorting on it would move lines already shown.
   */
  readonly transcript: OrderedMap<TranscriptEntry>;
  /**
   * Updates that arrived before their clip's final `clip` event, held in arrival order
   * per `clip_uuid` and applied when that clip arrives. Empty in a session that keeps rule 2.
   * A persistent `ReadonlyMap` (`size` counts clips, `updateCount` the updates held),
   * bounded by `maxPendingUpdates`: see {@link createClipsState}.
   */
  readonly pendingUpdates: PendingUpdates;
  /** How many updates ever arrived before their clip (held, then applied on arrival). */
  readonly orphanUpdates: number;
  /**
   * How many early updates were dropped unapplied: held while `maxPendingUpdates` more
   * early updates arrived, and their clip never came in that time. 0 in a session that
   * keeps rule 2.
   */
  readonly droppedUpdates: number;
  /** How many `partial_clip`s arrived for an already final clip (not applied: the final wins). */
  readonly stalePartials: number;
}

/** Options of {@link createClipsState}: the bound on early updates held. */
export interface ClipsOptions {
  /**
   * How many early `clip_update`s (arrived before their clip) are held at most; when one
   * more arrives, the oldest held is dropped and counted in `droppedUpdates`. Default
   * 10,000; 0 holds none.
   */
  readonly maxPendingUpdates?: number | undefined;
}

/** An empty clips state; `initialClipsState` is `createClipsState()`. */
export function createClipsState(options: ClipsOptions = {}): ClipsState {
  return {
    clips: OrderedMap.empty(),
    transcript: OrderedMap.empty(),
    pendingUpdates: PendingUpdates.empty(options.maxPendingUpdates ?? DEFAULT_MAX_PENDING_UPDATES),
    orphanUpdates: 0,
    droppedUpdates: 0,
    stalePartials: 0,
  };
}

/** The clips state before any event: no clips. Seed for {@link clipsReducer}. */
export const initialClipsState: ClipsState = createClipsState();

/**
 * Apply one event to the clips state. Pure; an event that changes nothing (or that this
 * reducer does not handle) returns the same state object.
 *
 * - `partial_clip`: merged over the previous partial of the same uuid (fields present win).
 * - `clip`: replaces the partials of its uuid wholesale; held updates are then applied.
 * - `clip_update`: each field present with a non-null value supersedes the earlier value;
 *   an absent field, or `null` ("refinement unavailable"), keeps the earlier value.
 *   An update for a clip with no final `clip` yet is held in `pendingUpdates` and counted
 *   in `orphanUpdates`; it is dropped (counted in `droppedUpdates`) only when
 *   `maxPendingUpdates` more early updates arrive before its clip does.
 */
export function clipsReducer(state: ClipsState, event: ServerEvent): ClipsState {
  switch (event.type) {
    case 'partial_clip':
      return onPartial(state, event.partial_clip);
    case 'clip':
      return onClip(state, event.clip);
    case 'clip_update':
      return onUpdate(state, event.clip_update);
    default:
      return state;
  }
}

function onPartial(state: ClipsState, partial: PartialClip): ClipsState {
  const id = partial.clip_uuid;
  const at = state.transcript.indexOf(id);
  if (at < 0) return { ...state, transcript: state.transcript[appendAbsent](id, { status: 'partial', clip: partial }) };
  const previous = state.transcript.at(at)!;
  if (previous.status === 'final') return { ...state, stalePartials: state.stalePartials + 1 };
  const clip = mergePresent(previous.clip, partial);
  if (clip === previous.clip) return state;
  return { ...state, transcript: state.transcript.setAt(at, { status: 'partial', clip }) };
}

function onClip(state: ClipsState, incoming: Clip): ClipsState {
  const id = incoming.clip_uuid;
  let clip = incoming;
  let pendingUpdates = state.pendingUpdates;
  if (pendingUpdates.size > 0) {
    const taken = pendingUpdates.take(id);
    for (const update of taken.updates) clip = applyUpdate(clip, update);
    pendingUpdates = taken.pending;
  }
  return {
    ...state,
    clips: state.clips.set(id, clip),
    transcript: state.transcript.set(id, { status: 'final', clip }),
    pendingUpdates,
  };
}

function onUpdate(state: ClipsState, update: ClipUpdate): ClipsState {
  const id = update.clip_uuid;
  // One key lookup per map: at a million clips each is a likely cache miss.
  const at = state.clips.indexOf(id);
  if (at < 0) {
    const { pending, dropped } = state.pendingUpdates.add(update);
    return {
      ...state,
      pendingUpdates: pending,
      orphanUpdates: state.orphanUpdates + 1,
      droppedUpdates: dropped ? state.droppedUpdates + 1 : state.droppedUpdates,
    };
  }
  const clip = state.clips.at(at)!;
  const next = applyUpdate(clip, update);
  if (next === clip) return state;
  // A final clip sits at the same position in both maps unless partials of later clips
  // came before it: check that slot's key first, and look the key up only when it differs.
  const transcript = state.transcript;
  const tAt = transcript.keyAt(at) === id ? at : transcript.indexOf(id);
  return {
    ...state,
    clips: state.clips.setAt(at, next),
    transcript: tAt >= 0 ? transcript.setAt(tAt, { status: 'final', clip: next }) : transcript.set(id, { status: 'final', clip: next }),
  };
}

/** `clip` with every non-null refined field of `update`; `clip` itself when nothing changes. */
export function applyUpdate(clip: Clip, update: ClipUpdate): Clip {
  let next: Record<string, unknown> | undefined;
  for (const key of Object.keys(update)) {
    if (key === 'clip_uuid') continue;
    const value = (update as Record<string, unknown>)[key];
    if (value === undefined || value === null) continue;
    if ((clip as Record<string, unknown>)[key] === value) continue;
    next ??= { ...clip };
    next[key] = value;
  }
  return (next as Clip | undefined) ?? clip;
}

/** `base` with every field that `patch` defines; `base` itself when nothing changes. */
function mergePresent<T extends object>(base: T, patch: T): T {
  let next: Record<string, unknown> | undefined;
  for (const key of Object.keys(patch)) {
    const value = (patch as Record<string, unknown>)[key];
    if (value === undefined || (base as Record<string, unknown>)[key] === value) continue;
    next ??= { ...(base as Record<string, unknown>) };
    next[key] = value;
  }
  return (next as T | undefined) ?? base;
}
