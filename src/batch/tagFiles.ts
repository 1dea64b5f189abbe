import type { OperatorFunction } from 'rxjs';
import { detectAudioEvents } from './calls.js';
import { batchFiles, type FileOutcome, type FilesOptions } from './batchFiles.js';
import type { AudioEventResult } from '../schema/batch.js';

/**
 * Audio event detection over many files: paths in, tagged results out.
 *
 * - Emits `{ path, result }` per detected file and `{ path, error, skipped }` per failure, as
 *   files finish; every input path gets exactly one outcome.
 * - At most `concurrency` (default 3, up to 25) requests in flight for this model and key,
 *   shared with every other audio event call in the process.
 * - Retries concurrency rejections and 502/503/504 with jittered backoff; stops the run on
 *   an invalid key, insufficient credits, the credit limit or the monthly quota, reporting
 *   the remaining files as skipped with that cause.
 * - Completes when the source completes and every file has an outcome; errors only with
 *   `failFast`, or `aborted` when `signal` aborts.
 *
 * Cold: each subscription runs its own files.
 *
 * ## Example
 * ```ts
 * import { readdirSync } from 'node:fs';
 * import { from } from 'rxjs';
 * import { tagFiles } from 'svc-stream/batch';
 *
 * from(readdirSync('samples').filter((f) => f.endsWith('.wav')).map((f) => `samples/${f}`))
 *   .pipe(tagFiles({ concurrency: 3 }))
 *   .subscribe((o) => console.log(o.path, 'result' in o ? Object.keys(o.result.probs) : o.error.code));
 * ```
 */
export function tagFiles(options: FilesOptions = {}): OperatorFunction<string, FileOutcome<AudioEventResult>> {
  return batchFiles(detectAudioEvents, options);
}
