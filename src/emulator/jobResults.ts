// What a completed emulated job reports per file. The shapes are the emulator's own
// (the contract shows none, §2.6): the duration is real, the analyses are placeholders.
import type { JobFile, EmulatedJobFlags } from './jobs.js';

/** The emotion window length of the batch emotion endpoint (wire reference), reused here. */
export const EMOTION_WINDOW_MS = 15_000;

export interface EmulatedFileResult {
  readonly file_index: number;
  readonly filename: string;
  readonly file_extension: string;
  /** True decoded duration (ffmpeg). */
  readonly duration_ms: number;
  /** Same shape as the emotion batch result (§2.3); every label `Neutral` in the emulator. */
  readonly emotion_annotation?: { emotion: string; time_series: { start_ms: number; duration_ms: number; emotion: string }[] } | undefined;
  /** One entry for the whole file; age and gender are not estimated by the emulator. */
  readonly demographics?: { speakers: { speaker_label: string; age_range: null; gender: null; speech_ms: number }[] } | undefined;
}

/** Milliseconds of 20 ms frames whose RMS is above a quiet threshold. */
export function speechMs(samples: Int16Array, sampleRate: number): number {
  const frame = Math.max(1, Math.round(sampleRate / 50));
  let loud = 0;
  for (let i = 0; i + frame <= samples.length; i += frame) {
    let sum = 0;
    for (let j = i; j < i + frame; j++) sum += samples[j]! * samples[j]!;
    if (Math.sqrt(sum / frame) > 300) loud++;
  }
  return loud * 20;
}

export function fileResult(file: JobFile, index: number, flags: EmulatedJobFlags): EmulatedFileResult {
  const base = { file_index: index, filename: file.filename, file_extension: file.fileExtension, duration_ms: file.durationMs };
  const windows = Math.floor(file.durationMs / EMOTION_WINDOW_MS);
  return {
    ...base,
    ...(flags.emotion_annotation
      ? {
          emotion_annotation: {
            emotion: 'Neutral',
            time_series: Array.from({ length: windows }, (_, i) => ({ start_ms: i * EMOTION_WINDOW_MS, duration_ms: EMOTION_WINDOW_MS, emotion: 'Neutral' })),
          },
        }
      : {}),
    ...(flags.demographics ? { demographics: { speakers: [{ speaker_label: '1', age_range: null, gender: null, speech_ms: file.speechMs }] } } : {}),
  };
}
