// Record a session's events with their audio positions to an NDJSON file that the emulator
// replays in step with the audio (`svc-stream emulator --scenario FILE.ndjson`).
import { closeSync, openSync, writeSync } from 'node:fs';
import { Observable, type MonoTypeOperatorFunction } from 'rxjs';
import { SvcError } from '../errors/index.js';
import { redactDeep } from '../redact.js';
import type { ServerEvent } from '../schema/events.js';

/** The first line of every recording: what the file is, and its version. */
export const RECORDING_HEADER = { type: 'svc-stream-recording', version: 1 } as const;

/** One recorded event: the wire frame, and when it came in audio time. */
export interface RecordedEvent {
  /** The audio position (ms) when the event came: it is replayed once this much audio was received. */
  readonly at_ms?: number;
  /** The event came after the end of audio: it is replayed then, before `done`. */
  readonly after_end?: true;
  /** The frame as the service sent it (the nested form; an `unknown` event's raw frame). */
  readonly event: Record<string, unknown>;
}

/** Options of {@link recordSession}. */
export interface RecordSessionOptions {
  /**
   * The audio position (ms) the client has sent, read as each event arrives (for example from
   * the session's stats and the format). Without it, or when it returns undefined, the position
   * is the latest audio time the events themselves name (a clip's end, a partial's end).
   */
  readonly positionMs?: (() => number | undefined) | undefined;
  /** Whether the end of audio has been sent (events after it are replayed after the end). */
  readonly audioEnded?: (() => boolean) | undefined;
  /** Strings masked in the recording besides every key the process was given (a base URL, an account id). */
  readonly secrets?: readonly (string | undefined)[] | undefined;
}

const URL_PATTERN = /\b(?:https?|wss?):\/\/[^\s"'<>]+/gi;

/** The audio time an event names, if any: where a clip or a partial ends. */
function eventAudioMs(e: ServerEvent): number | undefined {
  if (e.type === 'clip') return (e.clip.start_ms ?? 0) + (e.clip.duration_ms ?? 0);
  if (e.type === 'partial_clip') return e.partial_clip.end_ms ?? e.partial_clip.start_ms ?? undefined;
  return undefined;
}

/** A URL-free, key-free copy of a frame: `secrets` masked (the session masked its own key already), every URL masked. */
function scrub(frame: Record<string, unknown>, secrets: readonly (string | undefined)[]): Record<string, unknown> {
  const masked = redactDeep(frame, secrets);
  const text = JSON.stringify(masked);
  return /(?:https?|wss?):\/\//i.test(text) ? (JSON.parse(text.replace(URL_PATTERN, '***')) as Record<string, unknown>) : masked;
}

/**
 * Record the events passing through to `path` (NDJSON, overwritten per subscription), each
 * with the audio position it came at, so that `svc-stream emulator --scenario path` (or
 * `loadScenarioFile(path)`) replays the session in step with the same audio: a session
 * recorded once against the real service becomes a deterministic offline fixture.
 *
 * - Passes every event through unchanged; cold, one file per subscription.
 * - The first line is the header `{"type":"svc-stream-recording","version":1}`; then one {@link RecordedEvent} per event,
 *   in order. `done` is not recorded: the replaying emulator sends its own for the audio it gets.
 * - No key and no URL enters the file: the session masked its own key in every frame, and
 *   `secrets` and every `http(s)://`/`ws(s)://` URL are masked (`***`); the header holds neither.
 * - The file is written synchronously per event (lines are small), and closed when the stream
 *   ends, errors or is unsubscribed. A file that cannot be opened errors the stream with
 *   `SvcError('invalid_argument')` before anything is subscribed.
 *
 * ## Example
 * ```ts
 * import { analyzeConversation, fileSource, recordSession, samplePath } from 'svc-stream';
 *
 * fileSource(samplePath('call.wav'))
 *   .pipe(analyzeConversation({ config: 'default' }), recordSession('call.ndjson'))
 *   .subscribe({ error: (err) => console.error(String(err)) });
 * // later, offline: npx svc-stream emulator --scenario call.ndjson
 * ```
 */
export function recordSession(path: string, options: RecordSessionOptions = {}): MonoTypeOperatorFunction<ServerEvent> {
  return (source) =>
    new Observable<ServerEvent>((subscriber) => {
      let fd: number | undefined;
      try {
        fd = openSync(path, 'w');
        writeSync(fd, `${JSON.stringify(RECORDING_HEADER)}\n`);
      } catch (err) {
        if (fd !== undefined) closeSync(fd);
        subscriber.error(new SvcError('invalid_argument', `cannot write the recording ${path}: ${(err as Error).message}`, { cause: err }));
        return undefined;
      }
      let latestMs = 0;
      const close = () => {
        if (fd === undefined) return;
        closeSync(fd);
        fd = undefined;
      };
      const sub = source.subscribe({
        next: (e) => {
          const named = eventAudioMs(e);
          latestMs = Math.max(latestMs, options.positionMs?.() ?? 0, named ?? 0);
          if (e.type !== 'done' && fd !== undefined) {
            const frame = e.type === 'unknown' ? { type: e.event_type, ...e.data } : (e as unknown as Record<string, unknown>);
            const line: RecordedEvent = options.audioEnded?.() ? { after_end: true, event: scrub(frame, options.secrets ?? []) } : { at_ms: Math.round(latestMs), event: scrub(frame, options.secrets ?? []) };
            try {
              writeSync(fd, `${JSON.stringify(line)}\n`);
            } catch (err) {
              close();
              subscriber.error(new SvcError('invalid_argument', `cannot write the recording ${path}: ${(err as Error).message}`, { cause: err }));
              return;
            }
          }
          subscriber.next(e);
        },
        error: (err) => {
          close();
          subscriber.error(err);
        },
        complete: () => {
          close();
          subscriber.complete();
        },
      });
      return () => {
        sub.unsubscribe();
        close();
      };
    });
}
