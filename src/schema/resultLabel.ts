// What made a session's or a batch call's results, as one small value every view shows the same
// way: the service, the emulator (with what it says of them), a scenario file, a recording. The
// emulator tells it beside the contract's messages (its `x-svc-emulator` header, and for a
// scenario that must first hear the audio, a ping before the session's first event); this
// module reads those words and renders the one line people read. Pure and browser-safe.
import * as z from 'zod/mini';

/** The sources a {@link ResultLabel} names. */
export const RESULT_SOURCES = ['service', 'emulator', 'scenario', 'recording'] as const;

/** Validates a {@link ResultLabel} (extra fields are kept: a later version may add some). */
export const ResultLabelSchema = /* @__PURE__ */ z.looseObject({
  source: /* @__PURE__ */ z.enum(RESULT_SOURCES),
  note: /* @__PURE__ */ z.optional(/* @__PURE__ */ z.string()),
  file: /* @__PURE__ */ z.optional(/* @__PURE__ */ z.string()),
});

/**
 * What made a result:
 * - `service`: the service's models;
 * - `emulator`: the local emulator, from the signal alone; `note` says what (`speech segments
 *   only …`, what its batch stand-ins heard);
 * - `scenario`: a scenario file (`file`, its name) scripted the results: not an analysis of this audio;
 * - `recording`: a recorded session (`file`) replayed its events in step with the audio.
 *
 * `note` on any source says what happened later (a resumed segment the script could not follow).
 */
export type ResultLabel = z.infer<typeof ResultLabelSchema>;

/** The label of the service's own results. */
export const SERVICE_LABEL: ResultLabel = Object.freeze({ source: 'service' });

/**
 * The one line people read for a label, the same in the CLI, the dashboard, the relay's pages
 * and the supervisor's page (the CLI puts `source: ` before it).
 *
 * ## Example
 * ```ts
 * import { labelText } from 'svc-stream';
 *
 * labelText({ source: 'scenario', file: 'call.scenario.json' }); // 'scenario call.scenario.json (scripted results, not an analysis of this audio)'
 * ```
 */
export function labelText(label: ResultLabel): string {
  const note = label.note ? `; ${label.note}` : '';
  switch (label.source) {
    case 'service':
      return `the service${note}`;
    case 'emulator':
      return `emulator${label.note ? `: ${label.note}` : ''}`;
    case 'scenario':
      return `scenario${label.file ? ` ${label.file}` : ''} (scripted results, not an analysis of this audio)${note}`;
    case 'recording':
      return `recording${label.file ? ` ${label.file}` : ''} (its events replayed, not an analysis of this audio)${note}`;
  }
}

/** Whether two labels say the same (undefined: not known yet). */
export function sameLabel(a: ResultLabel | undefined, b: ResultLabel | undefined): boolean {
  return a === b || (a !== undefined && b !== undefined && a.source === b.source && a.note === b.note && a.file === b.file);
}

// ---- the emulator's words ------------------------------------------------------------------

/** What a session's `x-svc-emulator` header says: its label, or that it follows its audio first. */
export interface EmulatorHeaderLabel {
  /** The label, when the header decides it (undefined when the scenario must hear the audio first). */
  readonly label: ResultLabel | undefined;
  /** A scenario that names its audio: the script plays only if the session's audio is found in it. */
  readonly follows?: { readonly file: string | undefined; readonly audio: string } | undefined;
}

/** The note of an emulator session without a scenario (or with one that scripts nothing). */
export const SPEECH_SEGMENTS_NOTE = 'speech segments only (no transcription: clips without text; try --scenario)';

/** `key=value` parameters after the header's first word (values percent-encoded). */
function headerParams(parts: readonly string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const p of parts) {
    const eq = p.indexOf('=');
    if (eq <= 0) continue;
    const raw = p.slice(eq + 1).trim();
    let value = raw;
    try {
      value = decodeURIComponent(raw);
    } catch {
      // kept as written
    }
    out[p.slice(0, eq).trim()] = value;
  }
  return out;
}

/**
 * Reads the emulator's `x-svc-emulator` header (undefined: the service answered):
 * `speech-segments-only`; `scenario; file=NAME` (`; audio=AUDIO` when the scenario names its
 * audio: decided by the session's first audio); `recording; file=NAME`; `stand-in[; heard=…]
 * [; not-measured=…]` (batch answers: what the stand-ins heard, and what they could not
 * measure). An older emulator's bare words read the same.
 */
export function labelOfEmulatorHeader(header: string | undefined): EmulatorHeaderLabel {
  if (header === undefined) return { label: SERVICE_LABEL };
  const [word = '', ...rest] = header.split(';').map((p) => p.trim());
  const params = headerParams(rest);
  const file = params['file'];
  switch (word) {
    case 'scenario':
      if (params['audio'] !== undefined) return { label: undefined, follows: { file, audio: params['audio'] } };
      return { label: { source: 'scenario', ...(file ? { file } : {}) } };
    case 'recording':
      return { label: { source: 'recording', ...(file ? { file } : {}) } };
    case 'speech-segments-only':
      return { label: { source: 'emulator', note: SPEECH_SEGMENTS_NOTE } };
    default: {
      const said = [params['heard'] ? `heard: ${params['heard']}` : '', params['not-measured'] ? `not measured: ${params['not-measured']}` : ''].filter((p) => p !== '');
      return { label: { source: 'emulator', note: `stand-ins computed from the signal, not the service's models${said.length > 0 ? ` (${said.join('; ')})` : ''}` } };
    }
  }
}

/** The prefix of the emulator's ping that says what a session following its scenario's audio found. */
export const EMULATOR_PING_PREFIX = 'svc-emulator:';

/** What the emulator found of a session's audio in its scenario's: aligned at `offsetMs`, or not. */
export type EmulatorAlignment = { readonly aligned: true; readonly offsetMs: number } | { readonly aligned: false };

/** The ping payload the emulator sends for `alignment` (at most 125 bytes: a control frame's). */
export function emulatorPingText(alignment: EmulatorAlignment): string {
  return `${EMULATOR_PING_PREFIX}${alignment.aligned ? `aligned=${Math.round(alignment.offsetMs)}` : 'unaligned'}`;
}

/** Reads an emulator ping's payload; undefined for any other ping (a heartbeat's). */
export function readEmulatorPing(text: string): EmulatorAlignment | undefined {
  if (!text.startsWith(EMULATOR_PING_PREFIX)) return undefined;
  const rest = text.slice(EMULATOR_PING_PREFIX.length);
  if (rest === 'unaligned') return { aligned: false };
  const m = /^aligned=(\d{1,12})$/.exec(rest);
  return m ? { aligned: true, offsetMs: Number(m[1]) } : undefined;
}

/**
 * A stream's label after the emulator said what it found of a session's audio in the
 * scenario's (`follows`); `resumed`: the session resumed the stream after a failure. Pure.
 * Found: the script plays (the scenario's label). Not found in a stream's first session: the
 * audio is not the scenario's, and it got speech segments only (the emulator's label, saying
 * why). Not found after a resume: the label so far stands, with a note that the script stops
 * there. A resume found changes nothing.
 */
export function labelAfterAlignment(current: ResultLabel | undefined, follows: NonNullable<EmulatorHeaderLabel['follows']>, found: EmulatorAlignment, resumed: boolean): ResultLabel {
  const scripted: ResultLabel = { source: 'scenario', ...(follows.file ? { file: follows.file } : {}) };
  if (!resumed || current === undefined) {
    if (found.aligned) return scripted;
    return { source: 'emulator', note: `speech segments only: this audio is not ${follows.audio}, which ${follows.file ? `scenario ${follows.file}` : 'the scenario'} scripts` };
  }
  if (found.aligned || current.source !== 'scenario') return current;
  const note = `a resumed segment could not be found in ${follows.audio}: speech segments only from there`;
  return current.note === note ? current : { ...current, note };
}
