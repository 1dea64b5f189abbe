import type { OperatorFunction } from 'rxjs';
import type { Clip, ServerEvent } from '../schema/events.js';
import type { OrderedMap } from '../state/OrderedMap.js';
import { clipsReducer, initialClipsState } from '../state/clips.js';
import { foldState } from '../internal/fold.js';

/**
 * Final clips with every `clip_update` applied (ordering rules 1-2).
 *
 * - Emits an {@link OrderedMap} of final clips keyed by `clip_uuid`, in the order their
 *   `clip` events arrived, each time a `clip` arrives or an update changes a clip.
 * - A field present (non-null) in an update supersedes the earlier value; an absent or null
 *   field keeps it. Updates interleaved across clips each land on their own clip.
 * - An update that arrives before its clip is held and applied when the clip arrives.
 * - Ignores partial clips and every other event (no emission for them).
 * - Completes and errors with the source.
 *
 * Cold: each subscription folds its own state from the events it sees. Emitted maps are
 * immutable; `toArray()` gives a frozen array.
 *
 * ## Example
 * ```ts
 * import { from } from 'rxjs';
 * import type { ServerEvent } from 'svc-stream';
 * import { clipsWithUpdates } from 'svc-stream';
 *
 * const events: ServerEvent[] = [
 *   { type: 'clip', clip: { clip_uuid: 'a', text: 'hello', emotion: null } },
 *   { type: 'clip_update', clip_update: { clip_uuid: 'a', emotion: 'Happy' } },
 * ];
 * from(events)
 *   .pipe(clipsWithUpdates())
 *   .subscribe((clips) => console.log(clips.toArray().map((c) => `${c.text} (${c.emotion})`)));
 * // ['hello (null)']
 * // ['hello (Happy)']
 * ```
 */
export function clipsWithUpdates(): OperatorFunction<ServerEvent, OrderedMap<Clip>> {
  return foldState(clipsReducer, initialClipsState, (s) => s.clips);
}
