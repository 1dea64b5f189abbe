// Results and error bodies of the synchronous batch endpoints (§2.2, §2.3, §2.4).
import { z } from 'zod';

/** The 42 event names allowed as keys of `probs` (§2.2), exact and case-sensitive. */
export const AUDIO_EVENT_NAMES = [
  'cry', 'Acoustic_guitar', 'Applause', 'Bark', 'Bass_drum', 'Burping_or_eructation', 'Bus', 'Cello',
  'Chime', 'Clarinet', 'Computer_keyboard', 'Cough', 'Cowbell', 'Double_bass', 'Drawer_open_or_close',
  'Electric_piano', 'Fart', 'Finger_snapping', 'Fireworks', 'Flute', 'Glockenspiel', 'Gong',
  'Gunshot_or_gunfire', 'Harmonica', 'Hi-hat', 'Keys_jangling', 'Knock', 'Laughter', 'Meow',
  'Microwave_oven', 'Oboe', 'Saxophone', 'Scissors', 'Shatter', 'Snare_drum', 'Squeak', 'Tambourine',
  'Tearing', 'Telephone', 'Trumpet', 'Violin_or_fiddle', 'Writing',
] as const;
/** Validates one key of `probs` in an audio event result: one of {@link AUDIO_EVENT_NAMES} (§2.2). Infers {@link AudioEventName}. */
export const AudioEventNameSchema = z.enum(AUDIO_EVENT_NAMES);
/** A sound event the audio event classifier can report, e.g. `Laughter` (§2.2). */
export type AudioEventName = z.infer<typeof AudioEventNameSchema>;

const Probability = z.number().min(0).max(1);
const DurationMs = z.number().int().min(0);

/**
 * Audio event detection result. `probs` may hold every allowed key, any subset, or none
 * (both statements of §2.2 are contract); a key outside the list is a contract breach.
 */
export const AudioEventResultSchema = z.looseObject({
  probs: z.partialRecord(AudioEventNameSchema, Probability),
  duration_ms: DurationMs,
});
/** The 200 response of audio event detection (§2.2, §4.1): `probs` for a subset of events plus `duration_ms`. */
export type AudioEventResult = z.infer<typeof AudioEventResultSchema>;

/** The nine whole-file and per-window emotion labels of §2.3. */
export const EMOTION_LABELS = ['Angry', 'Disgusted', 'Afraid', 'Happy', 'Neutral', 'Other', 'Sad', 'Surprised', 'Unknown'] as const;
/** Validates an emotion label: one of {@link EMOTION_LABELS} (§2.3). Infers {@link EmotionLabel}. */
export const EmotionLabelSchema = z.enum(EMOTION_LABELS);
/** An emotion label of the emotion detection endpoint, e.g. `Neutral` (§2.3). */
export type EmotionLabel = z.infer<typeof EmotionLabelSchema>;

/** Validates one entry of `time_series` in an emotion result: `start_ms`, `duration_ms` and its `emotion` (§2.3). Infers {@link EmotionWindow}. */
export const EmotionWindowSchema = z.looseObject({
  start_ms: DurationMs,
  duration_ms: DurationMs,
  emotion: EmotionLabelSchema,
});
/** One fixed-length window of an emotion result's `time_series` (§2.3). */
export type EmotionWindow = z.infer<typeof EmotionWindowSchema>;

/** Emotion detection result; windows must be consecutive (each starts where the previous ends). */
export const EmotionResultSchema = z
  .looseObject({
    emotion: EmotionLabelSchema,
    time_series: z.array(EmotionWindowSchema),
  })
  .superRefine((r, ctx) => {
    for (let i = 1; i < r.time_series.length; i++) {
      const prev = r.time_series[i - 1]!;
      const cur = r.time_series[i]!;
      if (cur.start_ms !== prev.start_ms + prev.duration_ms) {
        ctx.addIssue({
          code: 'custom',
          path: ['time_series', i, 'start_ms'],
          message: `window ${i} starts at ${cur.start_ms} ms but window ${i - 1} ends at ${prev.start_ms + prev.duration_ms} ms`,
        });
      }
    }
  });
/** The 200 response of emotion detection (§2.3, §4.2): a whole-file label plus consecutive windows. */
export type EmotionResult = z.infer<typeof EmotionResultSchema>;

/** Behavior preset catalogue (wire reference). */
export const PresetSchema = z.looseObject({
  identifier: z.string(),
  name: z.string(),
  short_description: z.string(),
  detailed_description: z.string(),
});
/** One behavior preset of the catalogue; reference it in `BatchConfig.behaviors` as `preset:<identifier>`. */
export type Preset = z.infer<typeof PresetSchema>;
/** Validates the body of the list-presets endpoint: `{ presets: Preset[] }`. Infers {@link PresetList}. */
export const PresetListSchema = z.looseObject({ presets: z.array(PresetSchema) });
/** The body of the behavior preset list endpoint: `{ presets }`. */
export type PresetList = z.infer<typeof PresetListSchema>;
