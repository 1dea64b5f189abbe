import { describe, expect, it } from 'vitest';
import {
  AUDIO_EVENT_NAMES,
  AudioEventResultSchema,
  EMOTION_LABELS,
  EmotionResultSchema,
} from '../../src/schema/batch.js';

/** The 42 keys of §2.2, copied from the contract so a change to the source list is caught. */
const CONTRACT_EVENT_NAMES = [
  'cry', 'Acoustic_guitar', 'Applause', 'Bark', 'Bass_drum', 'Burping_or_eructation', 'Bus', 'Cello',
  'Chime', 'Clarinet', 'Computer_keyboard', 'Cough', 'Cowbell', 'Double_bass', 'Drawer_open_or_close',
  'Electric_piano', 'Fart', 'Finger_snapping', 'Fireworks', 'Flute', 'Glockenspiel', 'Gong',
  'Gunshot_or_gunfire', 'Harmonica', 'Hi-hat', 'Keys_jangling', 'Knock', 'Laughter', 'Meow',
  'Microwave_oven', 'Oboe', 'Saxophone', 'Scissors', 'Shatter', 'Snare_drum', 'Squeak', 'Tambourine',
  'Tearing', 'Telephone', 'Trumpet', 'Violin_or_fiddle', 'Writing',
];
const CONTRACT_EMOTIONS = ['Angry', 'Disgusted', 'Afraid', 'Happy', 'Neutral', 'Other', 'Sad', 'Surprised', 'Unknown'];

function issuePaths(result: { success: boolean; error?: { issues: { path: PropertyKey[] }[] } }): string[] {
  return (result.error?.issues ?? []).map((i) => i.path.map(String).join('.'));
}

describe('AudioEventResultSchema (§2.2)', () => {
  it('lists exactly the 42 contract keys', () => {
    expect(CONTRACT_EVENT_NAMES).toHaveLength(42);
    expect([...AUDIO_EVENT_NAMES]).toEqual(CONTRACT_EVENT_NAMES);
  });

  it('accepts the full set of 42 keys', () => {
    const probs = Object.fromEntries(CONTRACT_EVENT_NAMES.map((k, i) => [k, (i % 11) / 10]));
    const r = AudioEventResultSchema.safeParse({ probs, duration_ms: 12_345 });
    expect(r.success).toBe(true);
    expect(r.data).toEqual({ probs, duration_ms: 12_345 });
  });

  it.each(CONTRACT_EVENT_NAMES)('accepts %s alone (any subset)', (name) => {
    expect(AudioEventResultSchema.safeParse({ probs: { [name]: 0.42 }, duration_ms: 1000 }).success).toBe(true);
  });

  it('accepts a subset whose values do not sum to 1', () => {
    const r = AudioEventResultSchema.safeParse({ probs: { Laughter: 0.9, Applause: 0.8, cry: 0.7 }, duration_ms: 3000 });
    expect(r.success).toBe(true);
  });

  it('accepts an empty probs object (nothing confidently detected)', () => {
    const r = AudioEventResultSchema.safeParse({ probs: {}, duration_ms: 0 });
    expect(r.success).toBe(true);
    expect(r.data).toEqual({ probs: {}, duration_ms: 0 });
  });

  it.each([0, 1, 0.5, 1e-9])('accepts the boundary value %s', (v) => {
    expect(AudioEventResultSchema.safeParse({ probs: { Knock: v }, duration_ms: 10 }).success).toBe(true);
  });

  it.each(['laughter', 'LAUGHTER', 'Cry', 'hi-hat', 'Hi_hat', 'Speech', 'Music', 'Dog', '', 'Laughter '])(
    'rejects the key %j, which is not in the list (exact, case-sensitive)',
    (key) => {
      const r = AudioEventResultSchema.safeParse({ probs: { [key]: 0.5 }, duration_ms: 10 });
      expect(r.success).toBe(false);
      expect(issuePaths(r).some((p) => p.startsWith('probs'))).toBe(true);
    },
  );

  it('rejects an unknown key even beside valid ones', () => {
    const r = AudioEventResultSchema.safeParse({ probs: { Laughter: 0.5, laughter: 0.5 }, duration_ms: 10 });
    expect(r.success).toBe(false);
  });

  it.each([-0.01, 1.01, 2, -1, Number.NaN, Number.POSITIVE_INFINITY, '0.5', null, true])(
    'rejects the probability %s',
    (v) => {
      const r = AudioEventResultSchema.safeParse({ probs: { Applause: v }, duration_ms: 10 });
      expect(r.success).toBe(false);
      expect(issuePaths(r)).toContain('probs.Applause');
    },
  );

  it.each([-1, 1.5, 0.1, Number.NaN, '100', null, undefined])('rejects duration_ms %s', (d) => {
    const r = AudioEventResultSchema.safeParse({ probs: {}, duration_ms: d });
    expect(r.success).toBe(false);
    expect(issuePaths(r)).toContain('duration_ms');
  });

  it('rejects a missing or non-object probs', () => {
    expect(AudioEventResultSchema.safeParse({ duration_ms: 10 }).success).toBe(false);
    expect(AudioEventResultSchema.safeParse({ probs: null, duration_ms: 10 }).success).toBe(false);
    expect(AudioEventResultSchema.safeParse({ probs: [0.5], duration_ms: 10 }).success).toBe(false);
  });

  it('keeps extra top-level fields', () => {
    const input = { probs: { Bark: 0.7 }, duration_ms: 4200, model_version: 'svc-2.1', request_id: 'r-1' };
    const r = AudioEventResultSchema.safeParse(input);
    expect(r.success).toBe(true);
    expect(r.data).toEqual(input);
  });
});

describe('EmotionResultSchema (§2.3)', () => {
  it('lists exactly the 9 contract labels', () => {
    expect([...EMOTION_LABELS]).toEqual(CONTRACT_EMOTIONS);
  });

  it.each(CONTRACT_EMOTIONS)('accepts %s as the whole-file and window label', (label) => {
    const r = EmotionResultSchema.safeParse({
      emotion: label,
      time_series: [{ start_ms: 0, duration_ms: 15_000, emotion: label }],
    });
    expect(r.success).toBe(true);
  });

  it.each(['Frustrated', 'angry', 'NEUTRAL', 'Fear', '', null])('rejects the whole-file label %j', (label) => {
    const r = EmotionResultSchema.safeParse({ emotion: label, time_series: [] });
    expect(r.success).toBe(false);
    expect(issuePaths(r)).toContain('emotion');
  });

  it('rejects an unknown window label, naming the window', () => {
    const r = EmotionResultSchema.safeParse({
      emotion: 'Happy',
      time_series: [
        { start_ms: 0, duration_ms: 15_000, emotion: 'Happy' },
        { start_ms: 15_000, duration_ms: 15_000, emotion: 'Frustrated' },
      ],
    });
    expect(r.success).toBe(false);
    expect(issuePaths(r)).toContain('time_series.1.emotion');
  });

  it('rejects a missing emotion or time_series', () => {
    expect(EmotionResultSchema.safeParse({ time_series: [] }).success).toBe(false);
    expect(EmotionResultSchema.safeParse({ emotion: 'Sad' }).success).toBe(false);
  });

  it('accepts an empty time series (file shorter than one window)', () => {
    const r = EmotionResultSchema.safeParse({ emotion: 'Neutral', time_series: [] });
    expect(r.success).toBe(true);
    expect(r.data).toEqual({ emotion: 'Neutral', time_series: [] });
  });

  it('accepts consecutive windows, including a short last one and a non-zero start', () => {
    const series = [
      { start_ms: 0, duration_ms: 15_000, emotion: 'Neutral' },
      { start_ms: 15_000, duration_ms: 15_000, emotion: 'Angry' },
      { start_ms: 30_000, duration_ms: 15_000, emotion: 'Sad' },
      { start_ms: 45_000, duration_ms: 3_210, emotion: 'Neutral' },
    ];
    expect(EmotionResultSchema.safeParse({ emotion: 'Neutral', time_series: series }).success).toBe(true);
    const offset = series.map((w) => ({ ...w, start_ms: w.start_ms + 500 }));
    expect(EmotionResultSchema.safeParse({ emotion: 'Neutral', time_series: offset }).success).toBe(true);
  });

  it.each([
    ['a gap', 2, 30_001],
    ['an overlap', 2, 29_999],
    ['a repeated start', 1, 0],
    ['a window before the previous', 1, -1],
  ])('rejects %s, naming time_series.N.start_ms', (_what, index, badStart) => {
    const series = [
      { start_ms: 0, duration_ms: 15_000, emotion: 'Neutral' },
      { start_ms: 15_000, duration_ms: 15_000, emotion: 'Neutral' },
      { start_ms: 30_000, duration_ms: 15_000, emotion: 'Neutral' },
    ];
    series[index] = { ...series[index]!, start_ms: badStart };
    const r = EmotionResultSchema.safeParse({ emotion: 'Neutral', time_series: series });
    expect(r.success).toBe(false);
    expect(issuePaths(r)).toContain(`time_series.${index}.start_ms`);
  });

  it('names the gap in the message', () => {
    const r = EmotionResultSchema.safeParse({
      emotion: 'Neutral',
      time_series: [
        { start_ms: 0, duration_ms: 15_000, emotion: 'Neutral' },
        { start_ms: 16_000, duration_ms: 15_000, emotion: 'Neutral' },
      ],
    });
    expect(r.success).toBe(false);
    const issue = r.error!.issues.find((i) => i.path.join('.') === 'time_series.1.start_ms');
    expect(issue?.message).toMatch(/16000/);
    expect(issue?.message).toMatch(/15000/);
  });

  it.each([
    ['negative start', { start_ms: -1, duration_ms: 15_000, emotion: 'Happy' }, 'time_series.0.start_ms'],
    ['fractional start', { start_ms: 0.5, duration_ms: 15_000, emotion: 'Happy' }, 'time_series.0.start_ms'],
    ['negative duration', { start_ms: 0, duration_ms: -5, emotion: 'Happy' }, 'time_series.0.duration_ms'],
    ['fractional duration', { start_ms: 0, duration_ms: 1.5, emotion: 'Happy' }, 'time_series.0.duration_ms'],
  ])('rejects a window with %s', (_what, window, path) => {
    const r = EmotionResultSchema.safeParse({ emotion: 'Happy', time_series: [window] });
    expect(r.success).toBe(false);
    expect(issuePaths(r)).toContain(path);
  });

  it('keeps extra fields at the top level and inside windows', () => {
    const input = {
      emotion: 'Happy',
      model: 'ensemble',
      time_series: [{ start_ms: 0, duration_ms: 15_000, emotion: 'Happy', confidence: 0.8 }],
    };
    const r = EmotionResultSchema.safeParse(input);
    expect(r.success).toBe(true);
    expect(r.data).toEqual(input);
  });
});
