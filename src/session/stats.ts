// Live counters of one session, so nothing is lost quietly: every byte read from the
// source is either sent (flushed to the socket) or reported unsent when the session ends.

/**
 * Where a streaming session is (§3, client side): `connecting` (handshake), `streaming`
 * (socket open, config sent, audio flowing), `finishing` (end of audio sent, waiting for
 * `done`), then `done`, `error`, or `closed` (unsubscribed before the end).
 */
export type SessionPhase = 'connecting' | 'streaming' | 'finishing' | 'done' | 'error' | 'closed';

/**
 * Live counters of one streaming session, updated in place: pass one to the session's
 * `stats` option and read it at any time. Every byte read is sent or reported unsent.
 */
export interface SessionStats {
  phase: SessionPhase;
  /** Bytes received from the audio source. */
  bytesRead: number;
  /** Bytes flushed to the socket. */
  bytesSent: number;
  /** Binary frames flushed. */
  framesSent: number;
  /** Server events received (valid or not). */
  eventsReceived: number;
  /** Times the source was paused for backpressure. */
  pauses: number;
  /** Largest number of bytes waiting to be flushed at any time. */
  peakBufferedBytes: number;
  /** Close code and reason, once closed. */
  closeCode: number | undefined;
  closeReason: string | undefined;
}

/** A fresh {@link SessionStats}: phase `connecting`, every counter at zero. */
export function createSessionStats(): SessionStats {
  return {
    phase: 'connecting',
    bytesRead: 0,
    bytesSent: 0,
    framesSent: 0,
    eventsReceived: 0,
    pauses: 0,
    peakBufferedBytes: 0,
    closeCode: undefined,
    closeReason: undefined,
  };
}
