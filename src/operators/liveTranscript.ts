import type { OperatorFunction } from 'rxjs';
import type { ServerEvent } from '../schema/events.js';
import type { OrderedMap } from '../state/OrderedMap.js';
import { clipsReducer, initialClipsState, type TranscriptEntry } from '../state/clips.js';
import { foldState } from '../internal/fold.js';

/**
 * The live transcript: in-progress partial clips and final clips, one entry per `clip_uuid`.
 *
 * - Emits an {@link OrderedMap} of {@link TranscriptEntry} (`status: 'partial' | 'final'`)
 *   keyed by `clip_uuid`, ordered by the FIRST APPEARANCE of each uuid, whenever a
 *   `partial_clip`, `clip` or effective `clip_update` changes it.
 * - A repeated `partial_clip` grows its entry in place; the final `clip` replaces it (same
 *   position); later updates refine the final entry.
 * - A `partial_clip` after its clip is final is ignored (the final clip wins).
 * - Completes and errors with the source.
 *
 * Cold: each subscription folds its own state. Emitted maps are immutable.
 *
 * ## Example
 * ```ts
 * import { from } from 'rxjs';
 * import type { ServerEvent } from 'svc-stream';
 * import { liveTranscript } from 'svc-stream';
 *
 * const events: ServerEvent[] = [
 *   { type: 'partial_clip', partial_clip: { clip_uuid: 'a', text: 'hel' } },
 *   { type: 'partial_clip', partial_clip: { clip_uuid: 'a', text: 'hello wor' } },
 *   { type: 'clip', clip: { clip_uuid: 'a', text: 'hello world' } },
 * ];
 * from(events)
 *   .pipe(liveTranscript())
 *   .subscribe((lines) => console.log(lines.toArray().map((l) => `${l.status}: ${l.clip.text}`)));
 * // ['partial: hel']
 * // ['partial: hello wor']
 * // ['final: hello world']
 * ```
 */
export function liveTranscript(): OperatorFunction<ServerEvent, OrderedMap<TranscriptEntry>> {
  return foldState(clipsReducer, initialClipsState, (s) => s.transcript);
}
