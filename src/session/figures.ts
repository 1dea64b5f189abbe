// The figures people read of a session (where it is in the audio, how fast it goes, how long
// it spent reconnecting, what audio was sent, sent again and dropped), computed once from the
// session's own counters (`stats`) and a clock the caller gives. Pure: every view (the CLI's
// live view, its --json state line and summary, the dashboard, metrics) formats these numbers
// and counts nothing itself.
import { bytesToMs, isRawFormat, type AudioFormat } from '../schema/audio.js';
import type { SessionStats } from './stats.js';

/** What {@link sessionFigures} reads. */
export interface SessionFiguresInput {
  /** The session's counters (the `stats` given to the session), read as they are now. */
  readonly stats: Pick<SessionStats, 'status' | 'bytesRead' | 'bytesSent' | 'bytesReplayed' | 'bytesDropped' | 'reconnects' | 'reconnectingMs' | 'reconnectingSince'>;
  /** The format sent: a raw format turns bytes into time exactly. */
  readonly format?: AudioFormat | undefined;
  /** The whole audio's duration, when known (a file's). */
  readonly durationMs?: number | undefined;
  /** The file's size, for a container sent as it is (time in proportion to bytes, with `durationMs`). */
  readonly fileSize?: number | undefined;
  /** When the session was subscribed, on the clock of `now`. */
  readonly startedAt: number;
  /** Now, on the session's scheduler's clock (`Date.now()` unless the session was given a scheduler). */
  readonly now: number;
}

/** Audio of the session, in bytes and, when the format tells it, in ms. */
export interface AudioFigures {
  /** Read from the source (each byte once). */
  readonly read: number;
  /** Sent to the service at least once: each byte once, whatever a reconnect sent again. */
  readonly sent: number;
  /** Sent again, after a reconnect, that an earlier session had sent (counted once in `sent`). */
  readonly replayed: number;
  /** Read and never to be sent (cut during an outage, or left when the stream failed or was stopped). */
  readonly dropped: number;
  /** Read and not sent yet (0 once the session ended: `sent = read - dropped`). */
  readonly pending: number;
}

/** The figures of a session at one moment ({@link sessionFigures}). */
export interface SessionFigures {
  /**
   * How far into the audio the stream has come, ms, on its one time axis across reconnects:
   * the audio sent once plus what was dropped (passed, never to be analysed); once the
   * session failed, the audio actually sent. At most `durationMs`. Undefined when bytes cannot
   * be told as time (a container whose duration or size is unknown).
   */
  readonly positionMs: number | undefined;
  /** The whole audio's duration, when known. */
  readonly durationMs: number | undefined;
  /** `positionMs` of `durationMs`, 0 to 100, rounded down; undefined without both. */
  readonly percent: number | undefined;
  /** Time since the session started (`now - startedAt`), outages included: what the run took. */
  readonly wallMs: number;
  /** Sessions opened again after a failure. */
  readonly reconnects: number;
  /** Time spent reconnecting: each outage from its first failure to the first frame a reconnected session sent, the one going on now included. */
  readonly reconnectingMs: number;
  /** An outage is going on now. */
  readonly reconnecting: boolean;
  /** Time spent streaming: `wallMs - reconnectingMs`. */
  readonly streamingMs: number;
  /**
   * Audio per unit of streaming time (`positionMs / streamingMs`: 1 is live pace), outages
   * left out, so an outage neither lowers it nor, once over, raises it. Undefined before half a
   * second of streaming or before any audio.
   */
  readonly rate: number | undefined;
  /** The time left at `rate`, ms; undefined without a rate, a duration, or once at the end. */
  readonly etaMs: number | undefined;
  /** The audio account in bytes. */
  readonly bytes: AudioFigures;
  /** The audio account in ms (each undefined when bytes cannot be told as time). */
  readonly audioMs: { readonly [K in keyof AudioFigures]: number | undefined };
}

/** Below this much streaming time the rate is noise: not given. */
const MIN_RATE_MS = 500;

/** Bytes as audio time in the format sent, when it can be told. */
export function bytesAsMs(bytes: number, format: AudioFormat | undefined, durationMs: number | undefined, fileSize: number | undefined): number | undefined {
  if (format && isRawFormat(format)) return bytesToMs(format, bytes);
  return durationMs !== undefined && fileSize ? (durationMs * bytes) / fileSize : undefined;
}

/**
 * The figures of a session now, from its counters and a clock. Pure: the same input gives the
 * same figures, and nothing is counted here that the session did not count.
 *
 * - The audio account: `sent` (each byte once), `replayed`, `dropped`, `pending`; once the
 *   session ended every byte read is sent or dropped (`sent = read - dropped`).
 * - The position only moves forward while the session runs (the account's parts only grow).
 * - Time spent reconnecting runs from each outage's first failure to the first frame sent again
 *   (`stats.reconnectingMs`, plus the outage going on now from `stats.reconnectingSince`).
 * - The rate and ETA are the audio over the time spent streaming: a run with an outage has the
 *   rate of the same run without it.
 *
 * ## Example
 * ```ts
 * import { analyzeConversation, createSessionStats, fileSource, sessionFigures } from 'svc-stream';
 *
 * const stats = createSessionStats();
 * const startedAt = Date.now();
 * fileSource('call.wav').pipe(analyzeConversation({ stats })).subscribe();
 * setInterval(() => {
 *   const f = sessionFigures({ stats, format: { audio_format: 's16le', sample_rate: 16000, num_channels: 1 }, startedAt, now: Date.now() });
 *   console.log(f.positionMs, f.rate, f.reconnectingMs);
 * }, 1000);
 * ```
 */
export function sessionFigures(input: SessionFiguresInput): SessionFigures {
  const { stats, format, durationMs, fileSize, startedAt, now } = input;
  const read = stats.bytesRead;
  const sent = Math.max(0, stats.bytesSent - stats.bytesReplayed);
  const replayed = stats.bytesReplayed;
  const dropped = stats.bytesDropped;
  const bytes: AudioFigures = { read, sent, replayed, dropped, pending: Math.max(0, read - sent - dropped) };
  const ms = (n: number): number | undefined => bytesAsMs(n, format, durationMs, fileSize);

  const passed = ms(stats.status === 'failed' ? sent : sent + dropped);
  const positionMs = passed === undefined ? undefined : durationMs !== undefined ? Math.min(passed, durationMs) : passed;
  const percent = positionMs !== undefined && durationMs !== undefined && durationMs > 0 ? Math.floor((100 * positionMs) / durationMs) : undefined;

  const wallMs = Math.max(0, now - startedAt);
  const since = stats.reconnectingSince;
  const reconnectingMs = stats.reconnectingMs + (since !== undefined ? Math.max(0, now - since) : 0);
  const streamingMs = Math.max(0, wallMs - reconnectingMs);
  const rate = positionMs !== undefined && positionMs > 0 && streamingMs >= MIN_RATE_MS ? positionMs / streamingMs : undefined;
  const etaMs = rate !== undefined && durationMs !== undefined && positionMs! < durationMs ? (durationMs - positionMs!) / rate : undefined;

  return {
    positionMs,
    durationMs,
    percent,
    wallMs,
    reconnects: stats.reconnects,
    reconnectingMs,
    reconnecting: since !== undefined,
    streamingMs,
    rate,
    etaMs,
    bytes,
    audioMs: { read: ms(read), sent: ms(sent), replayed: ms(replayed), dropped: ms(dropped), pending: ms(bytes.pending) },
  };
}
