import type { OperatorFunction } from 'rxjs';
import type { BatchOptions } from '../batch/request.js';
import { overFiles, type FileCall, type FileOutcome, type FilesOptions } from '../batch/overFiles.js';

/**
 * Any batch call over many files: paths in, tagged results out.
 *
 * - `call` is one of the batch functions (`transcribeFile`, `detectSyntheticVoice`,
 *   `redactPiiPhi`, `analyzeConversationFile`, …); `options` are passed to every call.
 * - Emits `{ path, result }` or `{ path, error, skipped }` per input path, as files finish.
 * - Bounded, retried and stopped exactly as `tagFiles` is, against the call's model limit.
 * - Completes when the source completes and every file has an outcome; errors only with
 *   `failFast`, or `aborted` when `signal` aborts.
 *
 * Cold: each subscription runs its own files.
 *
 * ## Example
 * ```ts
 * import { of } from 'rxjs';
 * import { transcribeFile } from 'svc-stream/batch';
 * import { batchFiles } from 'svc-stream/operators';
 *
 * of('samples/call.wav', 'samples/call.mp3')
 *   .pipe(batchFiles(transcribeFile, { variant: 'english-vfast' }))
 *   .subscribe((o) => console.log(o.path, 'result' in o ? o.result : o.error.code));
 * ```
 */
export function batchFiles<T, O extends BatchOptions>(call: FileCall<T, O>, options: O & FilesOptions): OperatorFunction<string, FileOutcome<T>> {
  return overFiles(call, options);
}
