// Deterministic stand-ins for the batch models, computed from the real decoded signal: frame
// energy, spectral flatness, periodicity, dominant pitch and onsets tell speech from silence,
// broadband noise, claps and notes; events, emotions and segments follow what was heard, and
// what cannot be measured (an emotion, a sound under speech) is not claimed (docs/emulator.md).
import type { AudioEventName, AudioEventResult, EmotionLabel, EmotionResult } from '../schema/batch.js';

/** Length of one emotion window (wire reference: 15 000 ms). */
export const EMOTION_WINDOW_MS = 15_000;
/** An event is included in `probs` only from this probability up (§2.2: "confidently detected"). */
export const EVENT_THRESHOLD = 0.5;

const FRAME = 512; // 32 ms at 16 kHz
const SILENCE_DB = -45;

/** What one analysis frame looks like. */
export interface FrameFeatures {
  /** Level in dBFS. */
  readonly db: number;
  /** Spectral flatness 0 (pure tone) … 1 (white noise). */
  readonly flatness: number;
  /** Frequency of the strongest bin, Hz. */
  readonly peakHz: number;
  /** Share of the spectrum's energy within ±2 bins of the strongest peak. */
  readonly peakShare: number;
  /** Zero crossings per sample. */
  readonly zcr: number;
  /**
   * Periodicity 0 … 1: the frame's normalised autocorrelation at its best lag of a voice's
   * pitch (70-400 Hz). Voiced speech and sung or played notes are high; noise, claps and
   * fricatives low. 0 for a silent frame (not measured).
   */
  readonly voicing: number;
}

export interface SignalFeatures {
  readonly frames: readonly FrameFeatures[];
  readonly frameMs: number;
  readonly durationMs: number;
}

function fftMagnitudes(frame: Float64Array): Float64Array {
  const n = frame.length;
  const re = Float64Array.from(frame);
  const im = new Float64Array(n);
  for (let i = 1, j = 0; i < n; i++) {
    let bit = n >> 1;
    for (; j & bit; bit >>= 1) j ^= bit;
    j ^= bit;
    if (i < j) {
      [re[i], re[j]] = [re[j]!, re[i]!];
    }
  }
  for (let len = 2; len <= n; len <<= 1) {
    const ang = (-2 * Math.PI) / len;
    for (let i = 0; i < n; i += len) {
      for (let k = 0; k < len / 2; k++) {
        const wr = Math.cos(ang * k);
        const wi = Math.sin(ang * k);
        const a = i + k;
        const b = a + len / 2;
        const tr = re[b]! * wr - im[b]! * wi;
        const ti = re[b]! * wi + im[b]! * wr;
        re[b] = re[a]! - tr;
        im[b] = im[a]! - ti;
        re[a] = re[a]! + tr;
        im[a] = im[a]! + ti;
      }
    }
  }
  const mag = new Float64Array(n / 2);
  for (let k = 0; k < n / 2; k++) mag[k] = re[k]! * re[k]! + im[k]! * im[k]!;
  return mag;
}

/** Lowest and highest pitch of a voice, Hz: the lags periodicity looks at. */
const MIN_PITCH_HZ = 70;
const MAX_PITCH_HZ = 400;

/**
 * The frame's periodicity: normalised autocorrelation (every other sample, which keeps the
 * pitch range and halves the cost) at its best lag between the voice's pitch bounds.
 */
function periodicity(samples: Int16Array, start: number, sampleRate: number): number {
  const step = sampleRate >= 16_000 ? 2 : 1;
  const rate = sampleRate / step;
  const n = Math.floor(FRAME / step);
  const x = new Float64Array(n);
  let mean = 0;
  for (let i = 0; i < n; i++) mean += x[i] = samples[start + i * step]!;
  mean /= n;
  for (let i = 0; i < n; i++) x[i]! -= mean;
  const minLag = Math.max(1, Math.floor(rate / MAX_PITCH_HZ));
  const maxLag = Math.min(n - 32, Math.ceil(rate / MIN_PITCH_HZ));
  let best = 0;
  for (let lag = minLag; lag <= maxLag; lag++) {
    let xy = 0;
    let xx = 0;
    let yy = 0;
    for (let i = 0; i + lag < n; i++) {
      const a = x[i]!;
      const b = x[i + lag]!;
      xy += a * b;
      xx += a * a;
      yy += b * b;
    }
    const r = xx > 0 && yy > 0 ? xy / Math.sqrt(xx * yy) : 0;
    if (r > best) best = r;
  }
  return best;
}

/** Frame-level features of mono s16 samples. */
export function signalFeatures(samples: Int16Array, sampleRate: number, durationMs: number): SignalFeatures {
  const frames: FrameFeatures[] = [];
  const window = new Float64Array(FRAME);
  for (let i = 0; i < FRAME; i++) window[i] = 0.5 - 0.5 * Math.cos((2 * Math.PI * i) / (FRAME - 1));
  const buf = new Float64Array(FRAME);
  for (let start = 0; start + FRAME <= samples.length; start += FRAME) {
    let sum = 0;
    let zc = 0;
    for (let i = 0; i < FRAME; i++) {
      const v = samples[start + i]! / 32768;
      sum += v * v;
      if (i > 0 && (v >= 0) !== (samples[start + i - 1]! >= 0)) zc++;
      buf[i] = v * window[i]!;
    }
    const rms = Math.sqrt(sum / FRAME);
    const db = rms > 0 ? 20 * Math.log10(rms) : -120;
    const mag = fftMagnitudes(buf);
    let logSum = 0;
    let linSum = 0;
    let peak = 1;
    // Skip DC; floor each bin so digital silence does not make log(0).
    for (let k = 1; k < mag.length; k++) {
      const m = mag[k]! + 1e-12;
      logSum += Math.log(m);
      linSum += m;
      if (mag[k]! > mag[peak]!) peak = k;
    }
    const bins = mag.length - 1;
    const flatness = Math.exp(logSum / bins) / (linSum / bins);
    let around = 0;
    for (let k = Math.max(1, peak - 2); k <= Math.min(mag.length - 1, peak + 2); k++) around += mag[k]!;
    const voicing = db > SILENCE_DB ? periodicity(samples, start, sampleRate) : 0;
    frames.push({ db, flatness, peakHz: (peak * sampleRate) / FRAME, peakShare: linSum > 0 ? around / linSum : 0, zcr: zc / FRAME, voicing });
  }
  return { frames, frameMs: (FRAME / sampleRate) * 1000, durationMs };
}

/** A frame this periodic is voiced. */
const VOICED = 0.5;
/** A span with fewer frames above silence than this is silence. */
const ACTIVE = 0.15;

const clamp01 = (x: number): number => Math.min(1, Math.max(0, x));
const round3 = (x: number): number => Math.round(x * 1000) / 1000;
const sigmoid = (x: number): number => 1 / (1 + Math.exp(-x));

/** Summary measures over the active (non-silent) frames of a span. */
export interface SpanMeasures {
  readonly activeShare: number;
  readonly noisyShare: number;
  readonly tonalShare: number;
  /** Tonal frames whose peak stays within a semitone of the previous frame's. */
  readonly steadyTonalShare: number;
  /** Sharp level rises (onsets) per second of audio. */
  readonly onsetsPerSecond: number;
  readonly meanDb: number;
  readonly dbSpread: number;
  readonly medianPeakHz: number;
  readonly meanZcr: number;
  /** Active frames that are periodic at a voice's pitch (voiced speech, notes). */
  readonly voicedShare: number;
}

export function measureSpan(f: SignalFeatures, from = 0, to = f.frames.length): SpanMeasures {
  const frames = f.frames.slice(from, to);
  const active = frames.filter((x) => x.db > SILENCE_DB);
  const n = Math.max(1, active.length);
  let noisy = 0;
  let tonal = 0;
  let steady = 0;
  let onsets = 0;
  let voiced = 0;
  const peaks: number[] = [];
  for (let i = 0; i < frames.length; i++) {
    const x = frames[i]!;
    const prev = frames[i - 1];
    if (prev && x.db > SILENCE_DB && x.db - prev.db > 9) onsets++;
    if (x.db <= SILENCE_DB) continue;
    if (x.voicing > VOICED) voiced++;
    // Broadband without a dominant peak: noise, claps, fricatives.
    if (x.flatness > 0.02 && x.peakShare < 0.6) noisy++;
    if (x.peakShare > 0.35 && x.flatness < 0.05) {
      tonal++;
      peaks.push(x.peakHz);
      if (prev && prev.db > SILENCE_DB && Math.abs(12 * Math.log2(x.peakHz / Math.max(1, prev.peakHz))) < 1) steady++;
    }
  }
  const dbs = active.map((x) => x.db);
  const meanDb = dbs.length ? dbs.reduce((a, b) => a + b, 0) / dbs.length : -120;
  const spread = dbs.length ? Math.sqrt(dbs.reduce((a, b) => a + (b - meanDb) ** 2, 0) / dbs.length) : 0;
  peaks.sort((a, b) => a - b);
  const seconds = Math.max(0.001, (frames.length * f.frameMs) / 1000);
  return {
    activeShare: frames.length ? active.length / frames.length : 0,
    noisyShare: noisy / n,
    tonalShare: tonal / n,
    steadyTonalShare: steady / n,
    onsetsPerSecond: onsets / seconds,
    meanDb,
    dbSpread: spread,
    medianPeakHz: peaks.length ? peaks[Math.floor(peaks.length / 2)]! : 0,
    meanZcr: active.length ? active.reduce((a, b) => a + b.zcr, 0) / active.length : 0,
    voicedShare: voiced / n,
  };
}

/**
 * How much a span sounds like speech, 0 … 1: voiced frames alternating with unvoiced ones
 * (a share well inside 0 and 1: noise and claps are hardly voiced, a note or a tone is voiced
 * throughout), a pitch that does not hold (a played note does), and a level that rises and
 * falls with the syllables (steady noise and held notes do not).
 */
export function speechScore(m: SpanMeasures): number {
  if (m.activeShare < ACTIVE) return 0;
  return sigmoid(12 * (m.voicedShare - 0.35)) * sigmoid(12 * (0.92 - m.voicedShare)) * sigmoid(15 * (0.45 - m.steadyTonalShare)) * sigmoid(2 * (m.dbSpread - 5));
}

/** What a span of audio is, as the stand-ins hear it. */
export type HeardKind = 'silence' | 'speech' | 'noise' | 'tonal' | 'bursts';

/**
 * What a span is: `silence` (hardly any frame above -45 dBFS), `speech` ({@link speechScore}
 * above one half), else by its sound: `tonal` (held notes), `bursts` (broadband with many
 * onsets: claps, knocks), `noise` (broadband and steady: hiss, a fan, rain).
 */
export function heardKind(m: SpanMeasures): HeardKind {
  if (m.activeShare < ACTIVE) return 'silence';
  if (speechScore(m) > 0.5) return 'speech';
  if (m.steadyTonalShare > 0.35 && m.tonalShare > 0.45) return 'tonal';
  if (m.noisyShare > 0.5 && m.onsetsPerSecond > 1.5) return 'bursts';
  if (m.noisyShare > 0.5) return 'noise';
  return m.voicedShare > 0.5 ? 'tonal' : 'noise';
}

/** Seconds of each kind heard, second by second (each second judged with the next, as events are). */
export function heardSeconds(f: SignalFeatures): Record<HeardKind, number> {
  const out: Record<HeardKind, number> = { silence: 0, speech: 0, noise: 0, tonal: 0, bursts: 0 };
  const perSecond = Math.max(1, Math.round(1000 / f.frameMs));
  for (let s = 0; s * perSecond < f.frames.length; s++) {
    const frames = Math.min(perSecond, f.frames.length - s * perSecond);
    out[heardKind(measureSpan(f, s * perSecond, Math.min(f.frames.length, (s + 2) * perSecond)))] += (frames * f.frameMs) / 1000;
  }
  return out;
}

/**
 * What the stand-ins heard, for the emulator's `x-svc-emulator` header: `stand-in; heard=…`,
 * the kinds heard for at least half a second, most first, with their seconds
 * (`heard=speech 7.1s, silence 1.4s`; `heard=nothing` for an empty file), and what the answer
 * could not measure (`; not-measured=emotion`), so a label says it where the body cannot.
 */
export function heardNote(f: SignalFeatures, notMeasured?: string): string {
  const kinds = (Object.entries(heardSeconds(f)) as [HeardKind, number][]).filter(([, s]) => s >= 0.5).sort((a, b) => b[1] - a[1]);
  const heard = kinds.length === 0 ? 'nothing' : kinds.map(([k, s]) => `${k} ${s.toFixed(1)}s`).join(', ');
  return `stand-in; heard=${encodeURIComponent(heard)}${notMeasured ? `; not-measured=${encodeURIComponent(notMeasured)}` : ''}`;
}

/** Whether any second of `f` was heard as speech. */
export function speechHeard(f: SignalFeatures): boolean {
  return heardSeconds(f).speech > 0;
}

/**
 * Audio event probabilities from signal features, evaluated per second and kept at each
 * event's strongest second. Noise bursts with many onsets read as Applause; sustained tones
 * read as instruments by register. Speech is none of the contract's events, and what plays
 * under it cannot be told apart from it here: a second heard as speech ({@link speechScore})
 * claims no event, so fricatives and syllables never read as applause or a guitar. Silence
 * and steady broadband noise claim nothing either (`{}`: nothing confidently detected).
 */
export function audioEventProbs(f: SignalFeatures): Partial<Record<AudioEventName, number>> {
  const perSecond = Math.max(1, Math.round(1000 / f.frameMs));
  const best: Partial<Record<AudioEventName, number>> = {};
  const raise = (name: AudioEventName, p: number): void => {
    if (p > (best[name] ?? 0)) best[name] = p;
  };
  const spans = Math.max(1, Math.ceil(f.frames.length / perSecond));
  for (let s = 0; s < spans; s++) {
    const m = measureSpan(f, s * perSecond, Math.min(f.frames.length, (s + 2) * perSecond));
    if (m.activeShare < ACTIVE) continue;
    const notSpeech = 1 - speechScore(m);
    const applause = sigmoid(12 * (m.noisyShare - 0.5)) * sigmoid(2 * (m.onsetsPerSecond - 1.5)) * notSpeech;
    raise('Applause', applause);
    const tonal = sigmoid(12 * (m.tonalShare - 0.45)) * sigmoid(12 * (m.steadyTonalShare - 0.35)) * notSpeech;
    const plucked = sigmoid(1.5 * (m.onsetsPerSecond - 1.5));
    const hz = m.medianPeakHz;
    if (hz > 0) {
      if (hz < 250) raise('Cello', tonal * (1 - plucked * 0.5));
      else if (hz < 1000) {
        raise('Acoustic_guitar', tonal * plucked);
        raise('Electric_piano', tonal * (1 - plucked) * 0.9);
      } else if (hz < 2500) raise('Flute', tonal * 0.9);
      else raise('Chime', tonal * 0.9);
    }
  }
  const out: Partial<Record<AudioEventName, number>> = {};
  for (const [k, v] of Object.entries(best) as [AudioEventName, number][]) {
    const p = round3(clamp01(v));
    if (p >= EVENT_THRESHOLD) out[k] = p;
  }
  return out;
}

export function audioEventResult(f: SignalFeatures): AudioEventResult {
  return { probs: audioEventProbs(f), duration_ms: f.durationMs };
}

/**
 * The emotion of a span, as far as the signal can say: nothing of an emotion is measured, so
 * a span that is mostly speech reads `Neutral` (speech with no emotion claimed) and anything
 * else (silence, noise, music, claps) `Unknown`: there is no voice to label.
 */
function emotionOf(f: SignalFeatures, from: number, to: number): EmotionLabel {
  const perSecond = Math.max(1, Math.round(1000 / f.frameMs));
  let speech = 0;
  let active = 0;
  for (let s = from; s < to; s += perSecond) {
    const kind = heardKind(measureSpan(f, s, Math.min(to, s + 2 * perSecond)));
    if (kind === 'silence') continue;
    active++;
    if (kind === 'speech') speech++;
  }
  return active > 0 && speech * 2 >= active ? 'Neutral' : 'Unknown';
}

/**
 * Whole-file label plus consecutive 15 s windows (none when the file is shorter than one):
 * `Neutral` where speech is most of what sounds, `Unknown` elsewhere ({@link emotionOf}).
 */
export function emotionResult(f: SignalFeatures): EmotionResult {
  const framesPerWindow = Math.round(EMOTION_WINDOW_MS / f.frameMs);
  const count = Math.floor(f.durationMs / EMOTION_WINDOW_MS);
  const time_series: EmotionResult['time_series'] = [];
  for (let w = 0; w < count; w++) {
    time_series.push({
      start_ms: w * EMOTION_WINDOW_MS,
      duration_ms: EMOTION_WINDOW_MS,
      emotion: emotionOf(f, w * framesPerWindow, Math.min(f.frames.length, (w + 1) * framesPerWindow)),
    });
  }
  return { emotion: emotionOf(f, 0, f.frames.length), time_series };
}

/** Stretches of sound separated by at least `minSilenceMs` of silence. */
export function voiceSegments(f: SignalFeatures, minSilenceMs = 350): { start_ms: number; duration_ms: number }[] {
  const out: { start_ms: number; duration_ms: number }[] = [];
  const gapFrames = Math.ceil(minSilenceMs / f.frameMs);
  let start = -1;
  let lastActive = -1;
  for (let i = 0; i < f.frames.length; i++) {
    if (f.frames[i]!.db > SILENCE_DB) {
      if (start < 0) start = i;
      else if (i - lastActive > gapFrames) {
        out.push(span(start, lastActive));
        start = i;
      }
      lastActive = i;
    }
  }
  if (start >= 0) out.push(span(start, lastActive));
  return out;

  function span(a: number, b: number): { start_ms: number; duration_ms: number } {
    const s = Math.round(a * f.frameMs);
    return { start_ms: s, duration_ms: Math.min(f.durationMs, Math.round((b + 1) * f.frameMs)) - s };
  }
}

/** A synthetic-voice score: very steady level and pitch read as more machine-like. */
export function syntheticVoiceScore(f: SignalFeatures): number {
  const m = measureSpan(f);
  const steadiness = clamp01(1 - m.dbSpread / 15);
  return round3(clamp01(0.2 + 0.6 * steadiness * (1 - m.noisyShare)));
}
