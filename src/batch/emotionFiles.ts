import type { OperatorFunction } from 'rxjs';
import { detectEmotion, type EmotionOptions } from './calls.js';
import { batchFiles, type FileOutcome, type FilesOptions } from './batchFiles.js';
import type { EmotionResult } from '../schema/batch.js';

/**
 * Emotion detection over many files: paths in, tagged results out.
 *
 * - Emits `{ path, result }` or `{ path, error, skipped }` per input path, as files finish.
 * - Bounded, retried and stopped exactly as `tagFiles` is, against the emotion model's limit.
 * - Completes when the source completes and every file has an outcome; errors only with
 *   `failFast`, or `aborted` when `signal` aborts.
 *
 * Cold: each subscription runs its own files.
 *
 * ## Example
 * ```ts
 * import { of } from 'rxjs';
 * import { emotionFiles } from 'svc-stream/batch';
 *
 * of('samples/call.wav', 'samples/call.mp3')
 *   .pipe(emotionFiles())
 *   .subscribe((o) => console.log(o.path, 'result' in o ? o.result.emotion : o.error.code));
 * ```
 */
export function emotionFiles(options: EmotionOptions & FilesOptions = {}): OperatorFunction<string, FileOutcome<EmotionResult>> {
  return batchFiles(detectEmotion, options);
}
