// The conversation engine (also the clip-only STT and the PII redaction streams): partials and
// clips from the ClipTracker, and the scenario's timeline sent in order as typed wire events.
import type { BatchConfig } from '../schema/config.js';
import type { ClipUpdate } from '../schema/events.js';
import { BUILTIN_PARTICIPANT_ROLES } from './catalog.js';
import { ClipTracker, type DetectedClip, type PartialState } from './ClipTracker.js';
import { effectiveConfig, TrackedEngine, type EngineKind, type EngineOutput } from './engine.js';
import { verbatimEvent, type BehaviorDetectionWireEvent, type EngineEvent } from './engineEvents.js';
import { redactPii } from './pii.js';
import type { Scenario, TimelineEntry, TranscriptTurn } from './scenario.js';
import {
  clipRefs,
  configuredBehaviors,
  field,
  isBoolean,
  isNumber,
  isString,
  isStringArray,
  isStringOrNull,
  payloadOf,
  resolveRolePick,
  resolveTypePick,
  sentimentLabel,
  substitute,
  TimelineFieldError,
  typeCandidates,
  type Json,
} from './timeline.js';

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

  /** The wire event for a timeline entry, or undefined when the config, the audio or a mistyped field rules it out. */
  private resolve(entry: TimelineEntry): EngineEvent | undefined {
    const missing = [...clipRefs(entry.event)].filter((i) => this.uuids[i] === undefined);
    const ev = substitute(entry.event, this.uuids) as Json;
    const drop = (why: string): undefined => {
      this.out.log?.(`timeline: ${String(ev['type'])} not sent: ${why}`);
      return undefined;
    };
    try {
      return this.resolveKnown(ev, missing, drop);
    } catch (err) {
      if (err instanceof TimelineFieldError) return drop(err.message);
      throw err;
    }
  }

  private resolveKnown(ev: Json, missing: readonly number[], drop: (why: string) => undefined): EngineEvent | undefined {
    switch (ev['type']) {
      case 'clip_update': {
        if (missing.length > 0) return drop(`clip ${missing.join(', ')} was never detected`);
        const u = payloadOf(ev, 'clip_update');
        const on = this.stt();
        const fields: { emotion?: ClipUpdate['emotion']; accent?: ClipUpdate['accent'] } = {};
        if ('emotion' in u && on.emotion) fields.emotion = readNullable(u, 'emotion');
        if ('accent' in u && on.accent) fields.accent = readNullable(u, 'accent');
        if (Object.keys(fields).length === 0) return drop('no refined field is enabled in stt');
        const clipUuid = field(u, 'clip_uuid', isString, undefined);
        if (clipUuid === undefined) return drop('clip_uuid is missing');
        return { type: 'clip_update', clip_update: { clip_uuid: clipUuid, ...fields } };
      }
      case 'conversation_type': {
        const pick = resolveTypePick(this.cfg, payloadOf(ev, 'pick'));
        if (!pick) return drop('no candidate conversation type');
        this.currentType = pick.conversation_type_uuid;
        return { type: 'conversation_type', pick };
      }
      case 'participant_role': {
        const pick = resolveRolePick(this.cfg, this.currentType, payloadOf(ev, 'pick'));
        return pick ? { type: 'participant_role', pick } : drop('no candidate participant role');
      }
      case 'behavior_detection':
        return this.resolveBehavior(payloadOf(ev, 'detection'), drop);
      case 'topics':
        if (this.cfg.produce_topics === false) return drop('produce_topics is false');
        return { type: 'topics', topics: Array.isArray(ev['topics']) ? field(ev, 'topics', isStringArray, []) : [] };
      case 'topic_sentiment': {
        if (this.cfg.produce_topic_sentiments === false) return drop('produce_topic_sentiments is false');
        const t = payloadOf(ev, 'topic_sentiment');
        const score = Number(t['sentiment_score'] ?? 0);
        const topic = field(t, 'topic', isString, undefined);
        const speaker = field(t, 'speaker_label', isString, undefined);
        if (topic === undefined || speaker === undefined) return drop('topic and speaker_label are required');
        return {
          type: 'topic_sentiment',
          topic_sentiment: { topic, speaker_label: speaker, sentiment_score: score, sentiment_label: field(t, 'sentiment_label', isString, sentimentLabel(score)) },
        };
      }
      case 'summary':
        if (this.cfg.produce_summary === false) return drop('produce_summary is false');
        return { type: 'summary', text: field(ev, 'text', isString, null) };
      default:
        // Anything else (unknown types, hand-made clips) goes out as written, unchecked on
        // purpose: scenarios may script events the client does not know.
        return verbatimEvent(ev);
    }
  }

  private resolveBehavior(d: Json, drop: (why: string) => undefined): BehaviorDetectionWireEvent | undefined {
    // Wire reference: behaviors are skipped when no conversation types or roles apply.
    if (typeCandidates(this.cfg).length === 0 || (this.cfg.participant_roles ?? BUILTIN_PARTICIPANT_ROLES).length === 0) {
      return drop('no conversation types or roles apply');
    }
    const want = [d['behavior'], d['behavior_uuid'], d['behavior_name']].filter((x): x is string => typeof x === 'string').map((x) => x.toLowerCase());
    const b = configuredBehaviors(this.cfg).find((c) => want.includes(c.ref.toLowerCase()) || want.includes(c.uuid) || want.includes(c.name.toLowerCase()));
    if (!b) return drop(`behavior ${want.join('/')} is not in the config`);
    const speaker = typeof d['speaker_label'] === 'string' ? d['speaker_label'] : null;
    const key = `${b.uuid}|${speaker}`;
    if (this.behaviorsSent.has(key)) return drop('already detected for this speaker');
    const detection = {
      behavior_uuid: b.uuid,
      behavior_name: b.name,
      speaker_label: speaker,
      detected: field(d, 'detected', isBoolean, true),
      confidence: field(d, 'confidence', isNumber, 0.8),
      evidence_clip_uuids: Array.isArray(d['evidence_clip_uuids']) ? field(d, 'evidence_clip_uuids', isStringArray, []) : [],
      definitive_clip_uuid: field(d, 'definitive_clip_uuid', isString, null),
      reasoning: field(d, 'reasoning', isString, null),
    };
    this.behaviorsSent.add(key);
    return { type: 'behavior_detection', detection };
  }
}

/** A refined clip field the scenario wrote: a string, or null (sent as null). */
function readNullable(p: Json, key: string): string | null {
  const v = p[key];
  if (isStringOrNull(v)) return v;
  throw new TimelineFieldError(`${key} has the wrong type`);
}
