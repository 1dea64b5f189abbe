// Voice-activity segmentation shared by every streaming engine: decoded audio in 10 ms
// frames, one detector per channel, segments turned into partials and clips with speakers.
import type { BatchConfig } from '../schema/config.js';
import { stableUuid } from './catalog.js';
import type { PcmBlock } from './pcm.js';
import type { Scenario, TranscriptTurn } from './scenario.js';
import { levelDb, VoiceActivityDetector, type VadEvent } from './vad.js';

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

export interface TrackerHooks {
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
    // The speaker is picked before the count moves on: with `mono_speakers: 'alternate'` the
    // first clip is speaker 1, and a clip's final agrees with its partials.
    const speakerLabel = this.speakerFor(channel, turn);
    this.hooks.clip({
      index: this.clipCount++,
      uuid,
      channel,
      startMs: start,
      endMs: Math.max(start, end),
      speakerLabel,
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
