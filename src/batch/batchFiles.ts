// Many files through one batch call: a bounded, tagged, stoppable run. Per-file failures are
// results; a cause that dooms every other file stops the run and skips the rest, by name.
import { catchError, concat, defer, map, mergeMap, of, throwError, type Observable, type OperatorFunction } from 'rxjs';
import { SvcError } from '../errors/index.js';
import { abortable, ATTEMPT_GATE, type BatchOptions } from './request.js';
import { stopsRun } from './retry.js';
import { MAX_BATCH_CONCURRENCY } from '../schema/limits.js';

/** What became of one input file. */
export type FileOutcome<T> =
  | { readonly path: string; readonly result: T }
  | {
      readonly path: string;
      readonly error: SvcError;
      /** True when the file was never sent because an earlier failure stopped the run. */
      readonly skipped: boolean;
    };

export interface FilesOptions extends BatchOptions {
  /** Error the whole run on the first failed file (after emitting it). Default false. */
  readonly failFast?: boolean | undefined;
}

/** A call over one file, as the public batch functions are. */
export type FileCall<T, O extends BatchOptions> = (path: string, options: O) => Observable<T>;

/** Marks an attempt refused by the gate: never an SvcError, so it is never retried. */
class Skipped {
  constructor(readonly cause: SvcError) {}
}

function asSvcError(err: unknown): SvcError {
  if (err instanceof SvcError) return err;
  return new SvcError('internal_error', `unexpected failure: ${(err as Error)?.message ?? String(err)}`, { cause: err });
}

/** True for a successful outcome. */
export function isFileResult<T>(o: FileOutcome<T>): o is { readonly path: string; readonly result: T } {
  return 'result' in o;
}

/**
 * Run `call` over every path of the source and emit one outcome per path, tagged with it.
 *
 * - Bounded by the process-wide limit for the call's model, key and base URL
 *   (`options.concurrency`, default 3), shared with every other call to that model.
 * - Emits `{ path, result }` or `{ path, error, skipped }` as each file finishes (in
 *   completion order, not input order); completes when the source has completed and every
 *   file has an outcome.
 * - A per-file failure is an outcome, not an error. Causes that doom the other files too
 *   (invalid key, no access, insufficient credits, monthly credit limit, monthly usage quota)
 *   stop the run: nothing more is sent, and every remaining path, including those still
 *   arriving, is emitted with `skipped: true` and that error.
 * - With `failFast`, the first failure is emitted and then errors the stream, cancelling
 *   uploads in flight. Aborting `options.signal` errors the stream with `aborted`.
 *
 * Cold: each subscription runs its own files.
 *
 * ## Example
 * ```ts
 * import { of } from 'rxjs';
 * import { batchFiles, transcribeFile } from 'svc-stream/batch';
 *
 * of('samples/call.wav', 'samples/call.mp3')
 *   .pipe(batchFiles(transcribeFile, { variant: 'english-vfast' }))
 *   .subscribe((o) => console.log(o.path, 'result' in o ? o.result : o.error.code));
 * ```
 */
export function batchFiles<T, O extends BatchOptions>(call: FileCall<T, O>, options: O & FilesOptions): OperatorFunction<string, FileOutcome<T>> {
  return (paths$) =>
    abortable(
      defer(() => {
        let stop: SvcError | undefined;
        // The run's own abortable (below) tears every call down on abort, so the calls get no
        // signal: one listener per run, not one per file (which warned past ten).
        const { signal: _signal, ...perCall } = options;
        const gated = { ...perCall, [ATTEMPT_GATE]: () => (stop ? new Skipped(stop) : undefined) } as unknown as O;
        // The shared semaphore does the real bounding; this only keeps the queue short.
        return paths$.pipe(
          mergeMap((path): Observable<FileOutcome<T>> => {
            if (stop) return of({ path, error: stop, skipped: true });
            return call(path, gated).pipe(
              map((result): FileOutcome<T> => ({ path, result })),
              catchError((err: unknown) => {
                if (err instanceof Skipped) return of<FileOutcome<T>>({ path, error: err.cause, skipped: true });
                const error = asSvcError(err);
                if (!stop && stopsRun(error)) stop = error;
                const outcome: FileOutcome<T> = { path, error, skipped: false };
                return options.failFast ? concat(of(outcome), throwError(() => error)) : of(outcome);
              }),
            );
          }, MAX_BATCH_CONCURRENCY),
        );
      }),
      options.signal,
      'batch run',
    );
}
