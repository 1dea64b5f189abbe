// Energy-based voice-activity detection: turns one channel of decoded audio into speech
// segments with real start and end times, incrementally, 10 ms frame by 10 ms frame.

export interface VadOptions {
  /** A frame is voiced when its RMS level is above this, in dBFS. Default -55 (digital or G.711 silence is far below; 8 kHz G.711 speech needs the margin). */
  readonly thresholdDb?: number | undefined;
  /** Silence at least this long ends a segment. Default 350 ms (the sample call's turns are 400-900 ms apart; its longest pause inside a turn is 310 ms). */
  readonly minSilenceMs?: number | undefined;
  /** Segments with less voiced audio than this are noise and dropped. Default 120 ms. */
  readonly minSpeechMs?: number | undefined;
  /** Audio into a segment before its first progress report. Default 300 ms. */
  readonly firstPartialMs?: number | undefined;
  /** Audio between later progress reports. Default 1000 ms. */
  readonly partialIntervalMs?: number | undefined;
}

export const VAD_DEFAULTS: { readonly [K in keyof VadOptions]-?: NonNullable<VadOptions[K]> } = {
  thresholdDb: -55,
  minSilenceMs: 350,
  minSpeechMs: 120,
  firstPartialMs: 300,
  partialIntervalMs: 1000,
};

/**
 * What the detector reports: `progress` while a segment is open (its end so far; `first` on
 * the first report of a segment), `segment` once it is closed by silence or end of audio.
 * A segment that was reported in progress always closes as a `segment` (never dropped).
 */
export type VadEvent =
  | { readonly kind: 'progress'; readonly startMs: number; readonly endMs: number; readonly first: boolean }
  | { readonly kind: 'segment'; readonly startMs: number; readonly endMs: number };

/** The RMS level of `data[from..to)` at `stride` (interleaved channel `offset`), in dBFS. */
export function levelDb(data: Float32Array, from: number, to: number, stride = 1, offset = 0): number {
  let sum = 0;
  let n = 0;
  for (let i = from * stride + offset; i < to * stride; i += stride) {
    const x = data[i]!;
    sum += x * x;
    n++;
  }
  return n === 0 ? -Infinity : 10 * Math.log10(sum / n + 1e-20);
}

/** One channel's detector. Feed it consecutive frames with their times. */
export class VoiceActivityDetector {
  private readonly o: { readonly [K in keyof VadOptions]-?: NonNullable<VadOptions[K]> };
  private start: number | undefined;
  private lastVoicedEnd = 0;
  private voicedMs = 0;
  private nextReportAt = 0;
  private reported = false;

  constructor(options: VadOptions = {}) {
    this.o = { ...VAD_DEFAULTS, ...stripUndefined(options) } as typeof VAD_DEFAULTS;
  }

  /** One frame from `t0` to `t1` ms at `levelDb`. */
  frame(t0: number, t1: number, level: number): VadEvent[] {
    const out: VadEvent[] = [];
    if (level > this.o.thresholdDb) {
      if (this.start === undefined) {
        this.start = t0;
        this.voicedMs = 0;
        this.reported = false;
        this.nextReportAt = t0 + this.o.firstPartialMs;
      }
      this.lastVoicedEnd = t1;
      this.voicedMs += t1 - t0;
    }
    if (this.start === undefined) return out;
    if (t1 - this.lastVoicedEnd >= this.o.minSilenceMs) {
      this.close(out);
    } else if (t1 >= this.nextReportAt && this.voicedMs >= this.o.minSpeechMs) {
      out.push({ kind: 'progress', startMs: this.start, endMs: this.lastVoicedEnd, first: !this.reported });
      this.reported = true;
      this.nextReportAt = t1 + this.o.partialIntervalMs;
    }
    return out;
  }

  /** End of audio: close the open segment, if any. */
  end(): VadEvent[] {
    const out: VadEvent[] = [];
    if (this.start !== undefined) this.close(out);
    return out;
  }

  private close(out: VadEvent[]): void {
    if (this.start !== undefined && (this.reported || this.voicedMs >= this.o.minSpeechMs)) {
      out.push({ kind: 'segment', startMs: this.start, endMs: this.lastVoicedEnd });
    }
    this.start = undefined;
  }
}

function stripUndefined<T extends object>(o: T): { [K in keyof T]?: NonNullable<T[K]> } {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as { [K in keyof T]?: NonNullable<T[K]> };
}

/** Whole-signal segmentation of one mono channel (batch use). */
export function detectSpeech(samples: Float32Array, sampleRate: number, options: VadOptions = {}): Array<{ startMs: number; endMs: number }> {
  const vad = new VoiceActivityDetector(options);
  const frame = Math.max(1, Math.round(sampleRate / 100));
  const out: Array<{ startMs: number; endMs: number }> = [];
  const take = (events: VadEvent[]) => {
    for (const e of events) if (e.kind === 'segment') out.push({ startMs: e.startMs, endMs: e.endMs });
  };
  for (let i = 0; i + frame <= samples.length; i += frame) {
    take(vad.frame((i / sampleRate) * 1000, ((i + frame) / sampleRate) * 1000, levelDb(samples, i, i + frame)));
  }
  take(vad.end());
  return out;
}
