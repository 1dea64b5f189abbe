// Whether an answer came from the service or was made up by the emulator. The emulator marks
// every answer it gives with one response header the service never sends (so the contract's
// bodies stay exactly as the contract says); the HTTP client reads it into the result's
// metadata, kept beside the result (never in its JSON), and `resultSource` tells it.

import { EMULATOR_HEADER } from './schema/emulatorHeader.js';
import { labelOfEmulatorHeader, SERVICE_LABEL, type ResultLabel } from './schema/resultLabel.js';

export { EMULATOR_HEADER };

/** Where a result came from: the service, or the emulator (with what its header said). */
export type ResultSource = 'service' | 'emulator';

const marks = new WeakMap<object, string>();

/** Record that `result` came from an emulator answer whose header said `note` (internal: the HTTP client calls it). */
export function markEmulated(result: unknown, note: string | undefined): void {
  if (note !== undefined && typeof result === 'object' && result !== null) marks.set(result, note);
}

/**
 * Where a batch or job result came from: `emulator` when the emulator made it (its answer
 * carried {@link EMULATOR_HEADER}), `service` otherwise. The mark travels with the object the
 * call emitted, not with a copy of it.
 *
 * ## Example
 * ```ts
 * import { detectEmotion, resultSource } from 'svc-stream/batch';
 *
 * detectEmotion('call.wav').subscribe((r) => console.log(resultSource(r), r.emotion)); // emulator Neutral
 * ```
 */
export function resultSource(result: object): ResultSource {
  return marks.has(result) ? 'emulator' : 'service';
}

/** What the emulator's header said of `result` (`stand-in`, `scenario`, …), or undefined for a service result. */
export function emulatorNote(result: object): string | undefined {
  return marks.get(result);
}

/**
 * What made a batch or job result, as a {@link ResultLabel} (the one every view shows): the
 * service's, or the emulator's stand-ins with what they heard in the audio (`note`).
 *
 * ## Example
 * ```ts
 * import { detectAudioEvents, resultLabel } from 'svc-stream/batch';
 *
 * detectAudioEvents('call.wav').subscribe((r) => console.log(resultLabel(r).note)); // "stand-ins computed from the signal, … (heard: speech 7.1s)"
 * ```
 */
export function resultLabel(result: object): ResultLabel {
  const note = marks.get(result);
  return note === undefined ? SERVICE_LABEL : labelOfEmulatorHeader(note).label ?? { source: 'emulator', note };
}
