// What `rtp` and `media-stream` print for each call: a line when it starts, one per result
// (the live view's lines, prefixed with the call's id) or NDJSON, and a line when it ends.
// Every subscription handles its errors: one call's failure never ends the command.
import { initialConversationSnapshot, type ConversationSnapshot } from '../state/snapshot.js';
import { stateJson } from '../state/stateJson.js';
import type { CallAnalysis, CallOutcome } from '../telephony/analyzeCalls.js';
import { eventLine } from './liveView.js';
import type { CommandSource } from './resultSource.js';

/** How one call is shown. */
export interface CallViewOptions {
  readonly json: boolean;
  readonly out: (line: string) => void;
  /** The start line: as text (after the id), and as the NDJSON `call` line. */
  readonly started: { readonly text: string; readonly json: Record<string, unknown> };
  /** Counters shown when the call ends. */
  readonly counters: () => Record<string, number>;
  /** With `json`, a `state` line per call after its end (as `analyze --json` ends), with the source this gives. */
  readonly stateSource?: (() => CommandSource) | undefined;
  /** After the end line. */
  readonly onEnd?: ((outcome: CallOutcome) => void) | undefined;
}

/** Print one call's start, results and end as {@link CallViewOptions} say. */
export function showCall(call: CallAnalysis, options: CallViewOptions): void {
  const { json, out } = options;
  if (json) out(JSON.stringify(options.started.json));
  else out(`${call.id} ${options.started.text}`);
  let snapshot: ConversationSnapshot = initialConversationSnapshot;
  call.streams.snapshot$.subscribe({ next: (s) => (snapshot = s), error: () => undefined });
  call.streams.events$.subscribe({
    next: (e) => {
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
        if (options.stateSource !== undefined) {
          const { type, ...state } = stateJson(o.snapshot);
          out(JSON.stringify({ type, id: call.id, source: options.stateSource(), ...state }));
        }
      } else out(`${call.id} ${o.status}${error ? ` ${error.code}: ${error.message}` : ''} (${Object.entries(counters).map(([k, v]) => `${k} ${v}`).join(', ')})`);
      options.onEnd?.(o);
    },
    error: () => undefined,
  });
}
