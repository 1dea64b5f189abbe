// The scenario timeline's wire events, resolved against the config: "$clip:N" references,
// conversation type and role picks, configured behaviors, and the typed reading of fields.
import type { BatchConfig, ConversationTypeDef, ParticipantRoleDef } from '../schema/config.js';
import { SELECTION_SOURCES, type ConversationTypePick, type ParticipantRolePick } from '../schema/events.js';
import {
  BUILTIN_CONVERSATION_TYPES,
  BUILTIN_DEFAULT_CONVERSATION_TYPE,
  BUILTIN_DEFAULT_PARTICIPANT_ROLE,
  BUILTIN_PARTICIPANT_ROLES,
  stableUuid,
} from './catalog.js';
import type { Complete } from './engineEvents.js';
import { findPreset } from './presets.js';

export type Json = Record<string, unknown>;

const CLIP_REF = /^\$clip:(\d+)$/;

/** Every clip index a timeline event names with `"$clip:N"`. */
export function clipRefs(value: unknown, out: Set<number> = new Set()): Set<number> {
  if (typeof value === 'string') {
    const m = CLIP_REF.exec(value);
    if (m) out.add(Number(m[1]));
  } else if (Array.isArray(value)) {
    for (const v of value) clipRefs(v, out);
  } else if (value !== null && typeof value === 'object') {
    for (const v of Object.values(value)) clipRefs(v, out);
  }
  return out;
}

/** Replace `"$clip:N"` by UUIDs; refs to clips that never came are dropped from arrays, nulled elsewhere. */
export function substitute(value: unknown, uuids: readonly string[]): unknown {
  if (typeof value === 'string') {
    const m = CLIP_REF.exec(value);
    return m ? uuids[Number(m[1])] ?? null : value;
  }
  if (Array.isArray(value)) return value.map((v) => substitute(v, uuids)).filter((v) => v !== null);
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, substitute(v, uuids)]));
  }
  return value;
}

/** A timeline field of the wrong type: the event is not sent (the client would refuse it). */
export class TimelineFieldError extends Error {}

export const isString = (v: unknown): v is string => typeof v === 'string';
export const isNumber = (v: unknown): v is number => typeof v === 'number';
export const isBoolean = (v: unknown): v is boolean => typeof v === 'boolean';
export const isStringOrNull = (v: unknown): v is string | null => v === null || typeof v === 'string';
export const isStringArray = (v: unknown): v is string[] => Array.isArray(v) && v.every(isString);
const isSelectionSource = (v: unknown): v is ConversationTypePick['selection_source'] =>
  (SELECTION_SOURCES as readonly unknown[]).includes(v);

/**
 * A field the scenario wrote: absent (undefined or null) gives `fallback`; present with the
 * wrong type throws TimelineFieldError naming it.
 */
export function field<T, F = T>(p: Json, key: string, is: (v: unknown) => v is T, fallback: F): T | F {
  const v = p[key];
  if (v === undefined || v === null) return fallback;
  if (is(v)) return v;
  throw new TimelineFieldError(`${key} has the wrong type`);
}

/** A nested payload object of a timeline event; `{}` when absent or not an object. */
export function payloadOf(ev: Json, key: string): Json {
  const p = ev[key];
  return p !== null && typeof p === 'object' && !Array.isArray(p) ? (p as Json) : {};
}

export function sentimentLabel(score: number): string {
  if (score <= -0.6) return 'very_negative';
  if (score < -0.2) return 'negative';
  if (score <= 0.2) return 'neutral';
  if (score < 0.6) return 'positive';
  return 'very_positive';
}

export function typeCandidates(cfg: BatchConfig): readonly ConversationTypeDef[] {
  return cfg.conversation_types ?? BUILTIN_CONVERSATION_TYPES;
}

/** Roles that apply to the current conversation type (all of them before any type pick). */
export function roleCandidates(cfg: BatchConfig, currentType: string | undefined): readonly ParticipantRoleDef[] {
  const all = cfg.participant_roles ?? BUILTIN_PARTICIPANT_ROLES;
  return all.filter((r) => !r.applies_to_conversation_type_uuids || currentType === undefined || r.applies_to_conversation_type_uuids.includes(currentType));
}

/** The conversation type a scenario pick resolves to among the candidates, or undefined when none can be. */
export function resolveTypePick(cfg: BatchConfig, p: Json): Complete<ConversationTypePick> | undefined {
  const candidates = typeCandidates(cfg);
  const fallback = cfg.default_conversation_type === undefined ? BUILTIN_DEFAULT_CONVERSATION_TYPE : cfg.default_conversation_type;
  const byName = (n: unknown) => typeof n === 'string' && candidates.find((c) => c.name.toLowerCase() === n.toLowerCase());
  let def = candidates.find((c) => c.conversation_type_uuid === p['conversation_type_uuid']) || byName(p['name']) || undefined;
  let source = field(p, 'selection_source', isSelectionSource, candidates.length === 1 ? 'auto_selected_single_option' : 'inferred');
  if (!def && candidates.length === 1) {
    def = candidates[0]!;
    source = 'auto_selected_single_option';
  }
  if (!def && fallback) {
    def = fallback;
    source = 'default';
  }
  if (!def) return undefined;
  return {
    conversation_type_uuid: def.conversation_type_uuid,
    name: def.name,
    confidence: field(p, 'confidence', isNumber, 0.8),
    selection_source: source,
    detail: field(p, 'detail', isString, null),
    reasoning: field(p, 'reasoning', isString, null),
  };
}

/** The participant role a scenario pick resolves to, or undefined when none can be (or no speaker is named). */
export function resolveRolePick(cfg: BatchConfig, currentType: string | undefined, p: Json): Complete<ParticipantRolePick> | undefined {
  const candidates = roleCandidates(cfg, currentType);
  const fallback = cfg.default_participant_role === undefined ? BUILTIN_DEFAULT_PARTICIPANT_ROLE : cfg.default_participant_role;
  const byName = (n: unknown) => typeof n === 'string' && candidates.find((c) => c.name.toLowerCase() === n.toLowerCase());
  let def = candidates.find((c) => c.participant_role_uuid === p['participant_role_uuid']) || byName(p['name']) || undefined;
  let source = field(p, 'selection_source', isSelectionSource, candidates.length === 1 ? 'auto_selected_single_option' : 'inferred');
  if (!def && fallback) {
    def = fallback;
    source = 'default';
  }
  const speaker = p['speaker_label'];
  if (!def || typeof speaker !== 'string') return undefined;
  return {
    speaker_label: speaker,
    participant_role_uuid: def.participant_role_uuid,
    name: def.name,
    confidence: field(p, 'confidence', isNumber, 0.8),
    selection_source: source,
    detail: field(p, 'detail', isString, null),
    reasoning: field(p, 'reasoning', isString, null),
  };
}

/** Configured behaviors as (uuid, name, reference) triples. */
export function configuredBehaviors(cfg: BatchConfig): Array<{ uuid: string; name: string; ref: string }> {
  return (cfg.behaviors ?? []).map((b) => {
    if (typeof b === 'string') {
      const id = b.slice('preset:'.length);
      return { uuid: stableUuid(`behavior:${b}`), name: findPreset(id)?.name ?? id, ref: b };
    }
    return { uuid: b.behavior_uuid, name: b.name, ref: b.name };
  });
}
