// The emulator's analysis engine: clips come from voice-activity segmentation of the decoded
// signal; what the signal cannot give (text, speakers of mono audio, picks, topics…) comes
// from the scenario, matched to the detected clips and timed against audio received.
import type { BatchConfig, ConversationTypeDef, ParticipantRoleDef } from '../schema/config.js';
import {
  BUILTIN_CONVERSATION_TYPES,
  BUILTIN_DEFAULT_CONVERSATION_TYPE,
  BUILTIN_DEFAULT_PARTICIPANT_ROLE,
  BUILTIN_PARTICIPANT_ROLES,
  stableUuid,
} from './catalog.js';
import type { PcmBlock } from './pcm.js';
import { redactPii } from './pii.js';
import { findPreset } from './presets.js';
import type { Scenario, TimelineEntry, TranscriptTurn } from './scenario.js';
import { levelDb, VoiceActivityDetector, type VadEvent } from './vad.js';

type Json = Record<string, unknown>;

/** Where an engine's events go. */
export interface EngineOutput {
  send(event: Json): void;
  /** Called right after clip `index` (0-based, in emission order) was sent. */
  clipSent?(index: number): void;
  log?(line: string): void;
}

/** What every streaming endpoint's engine does with decoded audio. */
export interface Engine {
  push(block: PcmBlock): void;
  /** End of audio: close open segments and send what was waiting on audio. */
  flush(): void;
  /** Send the after-end events. Called after `flush`, before `done`. */
  finish(): void;
  /** Milliseconds of audio processed. */
  readonly audioMs: number;
}

/** A clip the tracker finalised. */
export interface DetectedClip {
  readonly index: number;
  readonly uuid: string;
  readonly channel: number;
  readonly startMs: number;
  readonly endMs: number;
  readonly speakerLabel: string;
  readonly text: string;
  readonly turn: TranscriptTurn | undefined;
}

/** An utterance in progress. */
export interface PartialState {
  readonly uuid: string;
  readonly channel: number;
  readonly startMs: number;
  readonly endMs: number | null;
  readonly speakerLabel: string | null;
  readonly text: string;
  readonly turn: TranscriptTurn | undefined;
}

interface TrackerHooks {
  partial(p: PartialState): void;
  clip(c: DetectedClip): void;
  /** After every 10 ms frame: its end time and whether any channel was voiced. */
  frame(endMs: number, voiced: boolean): void;
}

/**
 * Frames decoded audio into 10 ms frames, runs one voice-activity detector per channel and
 * turns segments into partials and clips. One speaker label per channel for multi-channel
 * audio; for mono, the matching transcript turn's speaker, else the scenario's rule.
 */
export class ClipTracker {
  private vads: VoiceActivityDetector[] = [];
  private sampleRate = 0;
  private channels = 0;
  private carry = new Float32Array(0);
  private framesDone = 0;
  private readonly used = new Set<TranscriptTurn>();
  private readonly open = new Map<number, string>();
  clipCount = 0;

  constructor(
    private readonly scenario: Scenario,
    private readonly config: BatchConfig,
    private readonly hooks: TrackerHooks,
  ) {}

  get audioMs(): number {
    return this.sampleRate === 0 ? 0 : (this.framesDone / this.sampleRate) * 1000;
  }

  push(block: PcmBlock): void {
    if (this.sampleRate === 0) {
      this.sampleRate = block.sampleRate;
      this.channels = block.channels;
      const v = this.scenario.vad ?? {};
      this.vads = Array.from({ length: block.channels }, () => new VoiceActivityDetector({
        thresholdDb: v.threshold_db,
        minSilenceMs: v.min_silence_ms,
        minSpeechMs: v.min_speech_ms,
        firstPartialMs: v.first_partial_ms,
        partialIntervalMs: v.partial_interval_ms,
      }));
    }
    const data = this.carry.length === 0 ? block.data : concat(this.carry, block.data);
    const ch = this.channels;
    const frame = Math.max(1, Math.round(this.sampleRate / 100));
    let i = 0;
    for (; i + frame * ch <= data.length; i += frame * ch) {
      const t0 = (this.framesDone / this.sampleRate) * 1000;
      const t1 = ((this.framesDone + frame) / this.sampleRate) * 1000;
      const base = i / ch;
      let voiced = false;
      const events: Array<[number, VadEvent]> = [];
      for (let c = 0; c < ch; c++) {
        const level = levelDb(data, base, base + frame, ch, c);
        if (level > (this.scenario.vad?.threshold_db ?? -55)) voiced = true;
        for (const e of this.vads[c]!.frame(t0, t1, level)) events.push([c, e]);
      }
      this.framesDone += frame;
      for (const [c, e] of events) this.onVad(c, e);
      this.hooks.frame(t1, voiced);
    }
    this.carry = data.slice(i);
  }

  /** End of audio: the samples short of a whole frame still count, then segments close. */
  flush(): void {
    if (this.carry.length > 0 && this.channels > 0) {
      this.framesDone += this.carry.length / this.channels;
      this.carry = new Float32Array(0);
    }
    this.vads.forEach((v, c) => {
      for (const e of v.end()) this.onVad(c, e);
    });
  }

  private onVad(channel: number, e: VadEvent): void {
    const uuid = this.open.get(channel) ?? stableUuid(`clip:${channel}:${Math.round(e.startMs)}`);
    const start = Math.round(e.startMs);
    const end = Math.round(e.endMs);
    const turn = this.matchTurn(channel, e.startMs, e.endMs);
    if (e.kind === 'progress') {
      this.open.set(channel, uuid);
      const words = turn ? turn.text.split(/\s+/).filter(Boolean) : [];
      const frac = turn ? Math.min(1, Math.max(0, (e.endMs - turn.start_ms) / Math.max(1, turn.end_ms - turn.start_ms))) : 0;
      this.hooks.partial({
        uuid,
        channel,
        startMs: start,
        endMs: e.first ? null : end,
        // Diarization has not resolved a mono speaker at the first report.
        speakerLabel: e.first && this.channels === 1 ? null : this.speakerFor(channel, turn),
        text: e.first || !turn || this.used.has(turn) ? '' : words.slice(0, Math.floor(words.length * frac)).join(' '),
        turn,
      });
      return;
    }
    this.open.delete(channel);
    const fresh = turn && !this.used.has(turn) ? turn : undefined;
    if (fresh) this.used.add(fresh);
    this.hooks.clip({
      index: this.clipCount++,
      uuid,
      channel,
      startMs: start,
      endMs: Math.max(start, end),
      speakerLabel: this.speakerFor(channel, turn),
      text: fresh?.text ?? '',
      turn,
    });
  }

  private speakerFor(channel: number, turn: TranscriptTurn | undefined): string {
    if (this.channels > 1) return String(channel + 1);
    if (this.config.stt?.speaker_diarization === false) return '1';
    if (turn) return turn.speaker_label;
    return this.scenario.mono_speakers === 'alternate' ? String((this.clipCount % 2) + 1) : '1';
  }

  /** The transcript turn overlapping [start, end] the most (same speaker as the channel for multi-channel audio). */
  private matchTurn(channel: number, start: number, end: number): TranscriptTurn | undefined {
    let best: TranscriptTurn | undefined;
    let bestOverlap = 0;
    for (const t of this.scenario.transcript) {
      if (this.channels > 1 && t.speaker_label !== String(channel + 1)) continue;
      const overlap = Math.min(end, t.end_ms) - Math.max(start, t.start_ms);
      if (overlap > bestOverlap) {
        best = t;
        bestOverlap = overlap;
      }
    }
    return best;
  }
}

function concat(a: Float32Array, b: Float32Array): Float32Array {
  const out = new Float32Array(a.length + b.length);
  out.set(a);
  out.set(b, a.length);
  return out;
}

/** The config the engine reads: `default` is the empty BatchConfig (every default). */
export function effectiveConfig(config: 'default' | BatchConfig | undefined): BatchConfig {
  return config === undefined || config === 'default' ? {} : config;
}

function sentimentLabel(score: number): string {
  if (score <= -0.6) return 'very_negative';
  if (score < -0.2) return 'negative';
  if (score <= 0.2) return 'neutral';
  if (score < 0.6) return 'positive';
  return 'very_positive';
}

const CLIP_REF = /^\$clip:(\d+)$/;

/** Every clip index a timeline event names with `"$clip:N"`. */
function clipRefs(value: unknown, out: Set<number> = new Set()): Set<number> {
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
function substitute(value: unknown, uuids: readonly string[]): unknown {
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

export type EngineKind = 'conversation' | 'stt' | 'pii';

/** What the engines share: audio goes to a ClipTracker, which also keeps the clock. */
abstract class TrackedEngine implements Engine {
  protected abstract readonly tracker: ClipTracker;

  get audioMs(): number {
    return this.tracker.audioMs;
  }

  push(block: PcmBlock): void {
    this.tracker.push(block);
  }

  abstract flush(): void;
  abstract finish(): void;
}

/**
 * Conversation analysis (and, with `kind`, the clip-only STT and the PII redaction streams):
 * partials and clips from the signal, the scenario's timeline resolved against the config.
 */
export class ConversationEngine extends TrackedEngine {
  protected readonly tracker: ClipTracker;
  private readonly cfg: BatchConfig;
  private readonly uuids: string[] = [];
  private next = 0;
  private clock = 0;
  private ended = false;
  private currentType: string | undefined;
  private readonly behaviorsSent = new Set<string>();

  constructor(
    private readonly scenario: Scenario,
    config: 'default' | BatchConfig | undefined,
    private readonly out: EngineOutput,
    private readonly kind: EngineKind = 'conversation',
  ) {
    super();
    this.cfg = effectiveConfig(config);
    this.tracker = new ClipTracker(scenario, this.cfg, {
      partial: (p) => this.onPartial(p),
      clip: (c) => this.onClip(c),
      frame: (t) => {
        this.clock = t;
        this.pump();
      },
    });
  }

  flush(): void {
    this.tracker.flush();
    this.clock = this.tracker.audioMs;
    this.pump();
  }

  finish(): void {
    this.ended = true;
    this.pump();
  }

  private stt(): { emotion: boolean; accent: boolean; deepfake: boolean } {
    const s = this.cfg.stt ?? {};
    return { emotion: s.emotion_signal === true, accent: s.accent_signal === true, deepfake: s.deepfake_signal === true };
  }

  private signals(turn: TranscriptTurn | undefined): { emotion: string | null; accent: string | null; deepfake_score: number | null } {
    const on = this.stt();
    return {
      emotion: on.emotion ? turn?.emotion ?? null : null,
      accent: on.accent ? turn?.accent ?? null : null,
      deepfake_score: on.deepfake ? turn?.deepfake_score ?? null : null,
    };
  }

  private language(turn: TranscriptTurn | undefined): string {
    return this.cfg.stt?.language ?? turn?.language ?? this.scenario.language;
  }

  private onPartial(p: PartialState): void {
    if (this.kind === 'pii') return;
    this.out.send({
      type: 'partial_clip',
      partial_clip: {
        clip_uuid: p.uuid,
        text: p.text,
        start_ms: p.startMs,
        end_ms: p.endMs,
        speaker_label: p.speakerLabel,
        ...(p.endMs === null ? { emotion: null, accent: null, deepfake_score: null } : this.signals(p.turn)),
      },
    });
  }

  private onClip(c: DetectedClip): void {
    this.uuids[c.index] = c.uuid;
    if (this.kind === 'pii') {
      const r = redactPii(c.text);
      this.out.send({
        type: 'redacted_segment',
        segment: {
          segment_uuid: c.uuid,
          start_ms: c.startMs,
          duration_ms: c.endMs - c.startMs,
          speaker_label: c.speakerLabel,
          text: r.text,
          entities: r.entities.map((e) => ({ label: e.label, start: e.start, end: e.end })),
        },
      });
    } else {
      this.out.send({
        type: 'clip',
        clip: {
          clip_uuid: c.uuid,
          text: c.text,
          start_ms: c.startMs,
          duration_ms: c.endMs - c.startMs,
          speaker_label: c.speakerLabel,
          language: this.language(c.turn),
          ...this.signals(c.turn),
        },
      });
    }
    this.out.clipSent?.(c.index);
    this.pump();
  }

  /** Send timeline entries, in order, while the head one is ready. */
  private pump(): void {
    if (this.kind !== 'conversation') return;
    const timeline = this.scenario.timeline;
    while (this.next < timeline.length) {
      const entry = timeline[this.next]!;
      if (!this.ready(entry)) return;
      this.next++;
      const event = this.resolve(entry);
      if (event) this.out.send(event);
    }
  }

  private ready(e: TimelineEntry): boolean {
    if (this.ended) return true;
    if (e.after_end) return false;
    for (const i of clipRefs(e.event)) if (this.uuids[i] === undefined) return false;
    if (e.after_clip !== undefined) return this.uuids[e.after_clip] !== undefined;
    return this.clock >= (e.at_ms ?? 0);
  }

  /** The wire event for a timeline entry, or undefined when the config or the audio rules it out. */
  private resolve(entry: TimelineEntry): Json | undefined {
    const missing = [...clipRefs(entry.event)].filter((i) => this.uuids[i] === undefined);
    const ev = substitute(entry.event, this.uuids) as Json;
    const drop = (why: string): undefined => {
      this.out.log?.(`timeline: ${String(ev['type'])} not sent: ${why}`);
      return undefined;
    };
    const payload = (key: string): Json => {
      const p = ev[key];
      return p !== null && typeof p === 'object' && !Array.isArray(p) ? (p as Json) : {};
    };
    switch (ev['type']) {
      case 'clip_update': {
        if (missing.length > 0) return drop(`clip ${missing.join(', ')} was never detected`);
        const u = payload('clip_update');
        const on = this.stt();
        const fields: Json = {};
        if ('emotion' in u && on.emotion) fields['emotion'] = u['emotion'];
        if ('accent' in u && on.accent) fields['accent'] = u['accent'];
        if (Object.keys(fields).length === 0) return drop('no refined field is enabled in stt');
        return { type: 'clip_update', clip_update: { clip_uuid: u['clip_uuid'], ...fields } };
      }
      case 'conversation_type': {
        const pick = this.resolveType(payload('pick'));
        if (!pick) return drop('no candidate conversation type');
        this.currentType = pick['conversation_type_uuid'] as string;
        return { type: 'conversation_type', pick };
      }
      case 'participant_role': {
        const pick = this.resolveRole(payload('pick'));
        return pick ? { type: 'participant_role', pick } : drop('no candidate participant role');
      }
      case 'behavior_detection':
        return this.resolveBehavior(payload('detection'), drop);
      case 'topics':
        if (this.cfg.produce_topics === false) return drop('produce_topics is false');
        return { type: 'topics', topics: Array.isArray(ev['topics']) ? ev['topics'] : [] };
      case 'topic_sentiment': {
        if (this.cfg.produce_topic_sentiments === false) return drop('produce_topic_sentiments is false');
        const t = payload('topic_sentiment');
        const score = Number(t['sentiment_score'] ?? 0);
        return { type: 'topic_sentiment', topic_sentiment: { topic: t['topic'], speaker_label: t['speaker_label'], sentiment_score: score, sentiment_label: t['sentiment_label'] ?? sentimentLabel(score) } };
      }
      case 'summary':
        if (this.cfg.produce_summary === false) return drop('produce_summary is false');
        return { type: 'summary', text: ev['text'] ?? null };
      default:
        // Anything else (unknown types, hand-made clips) goes out as written.
        return ev;
    }
  }

  private typeCandidates(): readonly ConversationTypeDef[] {
    return this.cfg.conversation_types ?? BUILTIN_CONVERSATION_TYPES;
  }

  private roleCandidates(): readonly ParticipantRoleDef[] {
    const all = this.cfg.participant_roles ?? BUILTIN_PARTICIPANT_ROLES;
    const t = this.currentType;
    return all.filter((r) => !r.applies_to_conversation_type_uuids || t === undefined || r.applies_to_conversation_type_uuids.includes(t));
  }

  private resolveType(p: Json): Json | undefined {
    const candidates = this.typeCandidates();
    const fallback = this.cfg.default_conversation_type === undefined ? BUILTIN_DEFAULT_CONVERSATION_TYPE : this.cfg.default_conversation_type;
    const byName = (n: unknown) => typeof n === 'string' && candidates.find((c) => c.name.toLowerCase() === n.toLowerCase());
    let def = candidates.find((c) => c.conversation_type_uuid === p['conversation_type_uuid']) || byName(p['name']) || undefined;
    let source = p['selection_source'] ?? (candidates.length === 1 ? 'auto_selected_single_option' : 'inferred');
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
      confidence: p['confidence'] ?? 0.8,
      selection_source: source,
      detail: p['detail'] ?? null,
      reasoning: p['reasoning'] ?? null,
    };
  }

  private resolveRole(p: Json): Json | undefined {
    const candidates = this.roleCandidates();
    const fallback = this.cfg.default_participant_role === undefined ? BUILTIN_DEFAULT_PARTICIPANT_ROLE : this.cfg.default_participant_role;
    const byName = (n: unknown) => typeof n === 'string' && candidates.find((c) => c.name.toLowerCase() === n.toLowerCase());
    let def = candidates.find((c) => c.participant_role_uuid === p['participant_role_uuid']) || byName(p['name']) || undefined;
    let source = p['selection_source'] ?? (candidates.length === 1 ? 'auto_selected_single_option' : 'inferred');
    if (!def && fallback) {
      def = fallback;
      source = 'default';
    }
    if (!def || typeof p['speaker_label'] !== 'string') return undefined;
    return {
      speaker_label: p['speaker_label'],
      participant_role_uuid: def.participant_role_uuid,
      name: def.name,
      confidence: p['confidence'] ?? 0.8,
      selection_source: source,
      detail: p['detail'] ?? null,
      reasoning: p['reasoning'] ?? null,
    };
  }

  /** Configured behaviors as (uuid, name, reference) triples. */
  private configuredBehaviors(): Array<{ uuid: string; name: string; ref: string }> {
    return (this.cfg.behaviors ?? []).map((b) => {
      if (typeof b === 'string') {
        const id = b.slice('preset:'.length);
        return { uuid: stableUuid(`behavior:${b}`), name: findPreset(id)?.name ?? id, ref: b };
      }
      return { uuid: b.behavior_uuid, name: b.name, ref: b.name };
    });
  }

  private resolveBehavior(d: Json, drop: (why: string) => undefined): Json | undefined {
    // Wire reference: behaviors are skipped when no conversation types or roles apply.
    if (this.typeCandidates().length === 0 || (this.cfg.participant_roles ?? BUILTIN_PARTICIPANT_ROLES).length === 0) {
      return drop('no conversation types or roles apply');
    }
    const want = [d['behavior'], d['behavior_uuid'], d['behavior_name']].filter((x): x is string => typeof x === 'string').map((x) => x.toLowerCase());
    const b = this.configuredBehaviors().find((c) => want.includes(c.ref.toLowerCase()) || want.includes(c.uuid) || want.includes(c.name.toLowerCase()));
    if (!b) return drop(`behavior ${want.join('/')} is not in the config`);
    const speaker = typeof d['speaker_label'] === 'string' ? d['speaker_label'] : null;
    const key = `${b.uuid}|${speaker}`;
    if (this.behaviorsSent.has(key)) return drop('already detected for this speaker');
    this.behaviorsSent.add(key);
    return {
      type: 'behavior_detection',
      detection: {
        behavior_uuid: b.uuid,
        behavior_name: b.name,
        speaker_label: speaker,
        detected: d['detected'] ?? true,
        confidence: d['confidence'] ?? 0.8,
        evidence_clip_uuids: Array.isArray(d['evidence_clip_uuids']) ? d['evidence_clip_uuids'] : [],
        definitive_clip_uuid: d['definitive_clip_uuid'] ?? null,
        reasoning: d['reasoning'] ?? null,
      },
    };
  }
}

/** Synthetic voice detection windows (emulator shape): one score per fixed window of audio. */
export const SYNTHETIC_VOICE_WINDOW_MS = 2000;
/** The service needs at least 0.5 s to judge (wire reference); shorter tails get no window. */
export const SYNTHETIC_VOICE_MIN_MS = 500;

/**
 * Synthetic voice detection: a window event every 2 s of audio with the milliseconds of
 * speech the detector found in it and the scenario's score (null when the scenario gives
 * none, or the window holds no speech: the emulator does not pretend to detect synthesis).
 */
export class SyntheticVoiceEngine extends TrackedEngine {
  protected readonly tracker: ClipTracker;
  private windowStart = 0;
  private speechMs = 0;
  private lastT = 0;

  constructor(
    private readonly scenario: Scenario,
    private readonly out: EngineOutput,
  ) {
    super();
    this.tracker = new ClipTracker(scenario, {}, {
      partial: () => undefined,
      clip: () => undefined,
      frame: (t, voiced) => {
        if (voiced) this.speechMs += t - this.lastT;
        this.lastT = t;
        if (t - this.windowStart >= SYNTHETIC_VOICE_WINDOW_MS - 1e-6) this.emit(t);
      },
    });
  }

  flush(): void {
    this.tracker.flush();
    const end = this.tracker.audioMs;
    if (end - this.windowStart >= SYNTHETIC_VOICE_MIN_MS) this.emit(end);
  }

  finish(): void {}

  private emit(end: number): void {
    const speech = Math.round(this.speechMs);
    this.out.send({
      type: 'synthetic_voice',
      window: {
        start_ms: Math.round(this.windowStart),
        duration_ms: Math.round(end - this.windowStart),
        speech_ms: speech,
        score: speech > 0 ? this.scenario.synthetic_voice_score : null,
      },
    });
    this.windowStart = end;
    this.speechMs = 0;
  }
}
