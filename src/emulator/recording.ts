// A recorded session (recordSession, `svc-stream analyze --record`) as a scenario: its events
// become verbatim steps, each played once as much audio was received as when it first came.
import { basename } from 'node:path';

/** Whether `text` is a recording (its first line is the recording header). */
export function isRecording(text: string): boolean {
  const first = text.slice(0, Math.max(0, text.indexOf('\n')) || text.length);
  try {
    const v = JSON.parse(first) as { type?: unknown };
    return v?.type === 'svc-stream-recording';
  } catch {
    return false;
  }
}

/** A recording as scenario input (checked by the scenario loader, which reads it). */
export interface RecordingScenario {
  readonly description: string;
  /** The recording's file name: its results are labelled `recording NAME`. */
  readonly file: string;
  readonly recording: true;
  readonly steps: ReadonlyArray<{ readonly at_ms: number; readonly event: Record<string, unknown> } | { readonly after_end: true; readonly event: Record<string, unknown> }>;
  readonly analysis: false;
}

/**
 * The scenario that replays a recording: one verbatim step per recorded event (`at_ms` or
 * `after_end`), in the recorded order; no analysis engine (the recorded clips are the clips).
 * Throws an Error naming the line of the first entry that is not a recorded event.
 */
export function recordingScenario(text: string, name = 'recording'): RecordingScenario {
  const lines = text.split('\n').filter((l) => l.trim() !== '');
  const header = JSON.parse(lines[0] ?? '{}') as { type?: unknown; version?: unknown };
  if (header.type !== 'svc-stream-recording') throw new Error(`${name}: line 1 is not a recording header`);
  if (header.version !== 1) throw new Error(`${name}: recording version ${String(header.version)} is not supported (1 is)`);
  const steps = lines.slice(1).map((line, i) => {
    let v: { at_ms?: unknown; after_end?: unknown; event?: unknown };
    try {
      v = JSON.parse(line) as typeof v;
    } catch (err) {
      throw new Error(`${name}: line ${i + 2}: not JSON: ${(err as Error).message}`);
    }
    if (typeof v.event !== 'object' || v.event === null || Array.isArray(v.event)) throw new Error(`${name}: line ${i + 2}: no event`);
    const event = v.event as Record<string, unknown>;
    return v.after_end === true ? { after_end: true as const, event } : { at_ms: typeof v.at_ms === 'number' ? v.at_ms : 0, event };
  });
  return { description: `replay of ${name}`, file: basename(name), recording: true, steps, analysis: false };
}
