// The fold a page runs and the test repeats in Node: parse recorded frames, split the session,
// and return the final snapshot as plain JSON (OrderedMaps as arrays, maps as entry lists).
// The page bundles this file with 'svc-stream/browser'; Node calls it with the main entry.
import { from, lastValueFrom } from 'rxjs';
import type { ParseResult, ServerEvent, SessionStreams } from '../../src/browser/index.js';

export interface Folded {
  /** Frames parsed, frames refused, warnings raised by tolerant parsing. */
  readonly parsed: number;
  readonly refused: number;
  readonly warnings: number;
  /** The last snapshot$ value, as plain JSON. */
  readonly snapshot: unknown;
  /** The last liveTranscript$ value, as plain JSON (a stream of its own, not read off the snapshot). */
  readonly transcript: unknown;
}

/** Plain JSON of a state value: anything with `toArray()` (OrderedMap) becomes its array, a map its entries. */
export function plain(value: unknown): unknown {
  if (value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) return value.map(plain);
  const withArray = value as { toArray?: unknown; entries?: unknown };
  if (typeof withArray.toArray === 'function') return plain((withArray.toArray as () => unknown[]).call(value));
  if (value instanceof Map || (typeof withArray.entries === 'function' && Symbol.iterator in value)) {
    return [...(value as Iterable<[unknown, unknown]>)].map(([k, v]) => [k, plain(v)]);
  }
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, plain(v)]));
}

export async function foldTexts(
  splitSession: (source$: import('rxjs').Observable<ServerEvent>) => SessionStreams,
  parseServerEvent: (text: string) => ParseResult,
  texts: readonly string[],
): Promise<Folded> {
  let refused = 0;
  let warnings = 0;
  const events: ServerEvent[] = [];
  for (const text of texts) {
    const r = parseServerEvent(text);
    if (!r.ok) refused++;
    else {
      events.push(r.event);
      warnings += r.warnings?.length ?? 0;
    }
  }
  const streams = splitSession(from(events));
  const [snapshot, transcript] = await Promise.all([lastValueFrom(streams.snapshot$), lastValueFrom(streams.liveTranscript$)]);
  return { parsed: events.length, refused, warnings, snapshot: plain(snapshot), transcript: plain(transcript) };
}
