// Where a streamed file stands, for the live view and its summary, on the stream's time axis
// (one axis across reconnects, as the session's events are): the audio sent once (what a
// reconnect sent again is not further into the file; what was dropped was passed), never going
// back, never beyond the whole; the rate and ETA from the time actually spent streaming.
import { bytesToMs, isRawFormat, type AudioFormat } from '../schema/audio.js';
import type { SessionStats } from '../session/stats.js';
import type { AudioProgress } from './terminalView.js';

/** What {@link audioProgress} reads. */
export interface AudioProgressSource {
  /** The session's figures (`bytesSent`, `bytesReplayed`, `bytesDropped`, `reconnectingMs`, `status`). */
  readonly stats: Pick<SessionStats, 'bytesSent' | 'bytesReplayed' | 'bytesDropped' | 'reconnectingMs' | 'status'>;
  /** The format sent: raw formats convert bytes to time exactly. */
  readonly format: AudioFormat | undefined;
  /** The whole audio's duration, when known (read at each call: a transcoder tells it late). */
  readonly durationMs: () => number | undefined;
  /** The file's size, for a container sent as it is (time in proportion to bytes). */
  readonly fileSize: number | undefined;
  /** The clock (ms). */
  readonly now: () => number;
}

/** Bytes as audio time in the format sent, when it can be told. */
export function bytesAsMs(bytes: number, format: AudioFormat | undefined, durationMs: number | undefined, fileSize: number | undefined): number | undefined {
  if (format && isRawFormat(format)) return bytesToMs(format, bytes);
  return durationMs !== undefined && fileSize ? (durationMs * bytes) / fileSize : undefined;
}

/**
 * A function giving the progress now. The position is the audio sent once plus what was
 * dropped (passed, never to be analysed), on the stream axis; it only moves forward (a
 * reconnect's replay is counted as sent before it is counted as replayed, for a moment) and
 * stops at the duration. Once the session failed, the position is the audio actually sent
 * (what was dropped was not). The elapsed time leaves out the time spent reconnecting, so the
 * rate and ETA stay those of streaming.
 */
export function audioProgress(source: AudioProgressSource): () => AudioProgress {
  const startedAt = source.now();
  let furthest = 0;
  return () => {
    const { stats } = source;
    const durationMs = source.durationMs();
    const sentOnce = Math.max(0, stats.bytesSent - stats.bytesReplayed);
    const passed = stats.status === 'failed' ? sentOnce : sentOnce + stats.bytesDropped;
    const raw = bytesAsMs(passed, source.format, durationMs, source.fileSize);
    let positionMs: number | undefined;
    if (raw !== undefined) {
      const bounded = durationMs !== undefined ? Math.min(raw, durationMs) : raw;
      furthest = stats.status === 'failed' ? bounded : Math.max(furthest, bounded);
      positionMs = furthest;
    }
    return { positionMs, durationMs, elapsedMs: Math.max(0, source.now() - startedAt - stats.reconnectingMs) };
  };
}
