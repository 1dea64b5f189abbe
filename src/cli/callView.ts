// What `rtp` and `media-stream` print for each call: a line when it starts, one per result
// (the live view's lines, prefixed with the call's id) or NDJSON, and a line when it ends.
// Every subscription handles its errors: one call's failure never ends the command.
import { initialConversationSnapshot, type ConversationSnapshot } from '../state/snapshot.js';
import { stateJson } from '../state/stateJson.js';
import type { CallAnalysis, CallOutcome } from '../telephony/analyzeCalls.js';
import { eventLine } from './liveView.js';
import { sourceLine } from './resultSource.js';
import { sameLabel, SERVICE_LABEL, type ResultLabel } from '../schema/resultLabel.js';

/** How one call is shown. */
export interface CallViewOptions {
  readonly json: boolean;
  readonly out: (line: string) => void;
  /** The start line: as text (after the id), and as the NDJSON `call` line. */
  readonly started: { readonly text: string; readonly json: Record<string, unknown> };
  /** Counters shown when the call ends. */
  readonly counters: () => Record<string, number>;
  /** Told each call's label (its session's `stats.label`) when it is first known, before the call's first result line. */
  readonly onLabel?: ((label: ResultLabel) => void) | undefined;
  /** After the end line. */
  readonly onEnd?: ((outcome: CallOutcome) => void) | undefined;
}

/** Print one call's start, results and end as {@link CallViewOptions} say. */
export function showCall(call: CallAnalysis, options: CallViewOptions): void {
  const { json, out } = options;
  if (json) out(JSON.stringify(options.started.json));
  else out(`${call.id} ${options.started.text}`);
  let snapshot: ConversationSnapshot = initialConversationSnapshot;
  let labelTold = false;
  call.streams.snapshot$.subscribe({ next: (s) => (snapshot = s), error: () => undefined });
  call.streams.events$.subscribe({
    next: (e) => {
      if (!labelTold && call.stats.label !== undefined) {
        labelTold = true;
        options.onLabel?.(call.stats.label);
      }
      if (json) out(JSON.stringify({ type: 'event', id: call.id, event: e }));
      else {
        const line = eventLine(e, snapshot);
        if (line !== undefined) out(`${call.id} ${line}`);
      }
    },
    // The outcome reports it.
    error: () => undefined,
  });
  call.outcome$.subscribe({
    next: (o) => {
      const counters = options.counters();
      const error = o.error === undefined ? undefined : { code: (o.error as { code?: string }).code ?? 'error', message: (o.error as Error).message };
      if (json) {
        out(JSON.stringify({ type: 'call_end', id: call.id, status: o.status, duration_ms: o.snapshot.aggregates.audioDurationMs, stats: counters, ...(error ? { error } : {}) }));
        // The call's state, as `analyze --json` ends, with what made it.
        const { type, ...state } = stateJson(o.snapshot);
        const label = call.stats.label ?? SERVICE_LABEL;
        out(JSON.stringify({ type, id: call.id, source: label.source, label, ...state }));
      } else out(`${call.id} ${o.status}${error ? ` ${error.code}: ${error.message}` : ''} (${Object.entries(counters).map(([k, v]) => `${k} ${v}`).join(', ')})`);
      options.onEnd?.(o);
    },
    error: () => undefined,
  });
}

/**
 * The `source: …` lines of a command's calls: `first` at once (what the command's own embedded
 * emulator makes of every call), then a call's label when it differs from the last said, before
 * that call's first result line; never the service's, nothing when `quiet` (NDJSON carries the
 * label per call; on workers the primary said it). Returns the calls' `onLabel`.
 */
export function labelLines(quiet: boolean, out: (line: string) => void, first?: ResultLabel | undefined): (label: ResultLabel) => void {
  let said: ResultLabel | undefined;
  const say = (label: ResultLabel): void => {
    if (sameLabel(label, said)) return;
    said = label;
    if (label.source !== 'service') out(sourceLine(label));
  };
  if (first !== undefined) say(first);
  return (label) => {
    if (!quiet) say(label);
  };
}
