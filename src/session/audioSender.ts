// The outbound bytes of one streaming session: chunks queued before the socket opens, chunks held
// and coalesced while a frame is being written, the frames in flight and the pressure they make.
import WebSocket from 'ws';
import { SessionError, type AudioAccount } from '../errors.js';
import type { SessionStats } from './stats.js';

/**
 * Chunks read while a frame is still being written are copied into one buffer and sent as one
 * frame when that write calls back (binary audio frames may be split anywhere, §3): one frame,
 * one mask, one write instead of one per chunk. No held frame grows past this size; a chunk
 * this large is never held.
 */
export const COALESCE_BYTES = 64 * 1024;
const BINARY = { binary: true } as const;

/** What the sender reports to the session that owns it. */
export interface AudioSenderHost {
  /** A send failed or the socket is no longer open: nothing more can go. */
  lost(): void;
  /** A frame was flushed and the bytes waiting fell to half the high-water mark or below. */
  drained(): void;
  /** The bytes waiting exceed the high-water mark (a pull-capable source: pause it). */
  pressure(): void;
  /** The bytes waiting exceed `maxBufferedBytes` (a push-only source): the session fails with `error`. */
  overflow(error: SessionError): void;
}

/** The sender's bounds. */
export interface AudioSenderLimits {
  /** Bytes waiting above which `pressure` is reported (pull-capable source). */
  readonly highWaterMark: number;
  /** Bytes waiting above which `overflow` is reported (push-only source). */
  readonly maxBufferedBytes: number;
  /** Whether the source can be paused: `pressure` when true, `overflow` when false. */
  readonly pausable: boolean;
}

/** The audio account of a session's counters: bytes read, sent (flushed), and read but not sent. */
export function audioAccount(stats: SessionStats): AudioAccount {
  return { read: stats.bytesRead, sent: stats.bytesSent, unsent: stats.bytesRead - stats.bytesSent };
}

/**
 * Owns the bytes between the source and the socket. The session calls `attach` once the socket
 * exists, `write` per chunk, `open` on the handshake and `end` after the last chunk; the sender
 * counts `bytesRead`, `bytesSent`, `framesSent` and `peakBufferedBytes` in `stats`.
 */
export class AudioSender {
  private ws: WebSocket | undefined;
  private opened = false;
  /** Chunks read before the socket opened. */
  private queue: Uint8Array[] = [];
  /** Bytes read and not yet flushed (queued, held, or in the socket's buffers). */
  private pending = 0;
  /**
   * Chunks read while a frame was being written, copied (a source may reuse its buffer once
   * `next` returns, as it could when ws masked each chunk at once), to go as one frame.
   */
  private held: Buffer | undefined;
  private heldBytes = 0;
  /** The byte length of each frame sent and not yet flushed, oldest first (ws calls back in order). */
  private readonly inFlight: number[] = [];
  private inFlightHead = 0;
  /** One callback for every frame, instead of a closure per chunk. */
  private readonly onFlushed = (err?: Error): void => this.flushed(err);
  private readonly lowWater: number;

  constructor(
    private readonly stats: SessionStats,
    private readonly host: AudioSenderHost,
    private readonly limits: AudioSenderLimits,
  ) {
    this.lowWater = limits.highWaterMark / 2;
  }

  /** The socket the frames go to (chunks written before `open` are queued). */
  attach(ws: WebSocket): void {
    this.ws = ws;
  }

  /** The audio account of this moment. */
  account(): AudioAccount {
    return audioAccount(this.stats);
  }

  /**
   * One chunk read from the source (non-empty, `len` its byte length): queued before the socket
   * opened, sent or held after. Reports `lost` when the socket is past the point of sending.
   */
  write(chunk: Uint8Array, len: number): void {
    this.stats.bytesRead += len;
    if (this.opened) {
      // Once the socket is not open no chunk can go: stop reading now, so the account is the
      // one of this moment (and a source with no I/O between chunks cannot spin on failed sends).
      if (this.ws!.readyState !== WebSocket.OPEN) {
        this.host.lost();
        return;
      }
      this.offer(chunk, len);
    } else if (this.ws!.readyState > WebSocket.OPEN) {
      // A handshake already refused or aborted: nothing more is worth queueing.
      this.host.lost();
      return;
    } else {
      // Copied, as a chunk sent at once is (ws masks it into a frame of its own): a source may
      // reuse its buffer once `next` returns.
      this.queue.push(new Uint8Array(chunk));
      this.pending += len;
    }
    this.checkPressure();
  }

  /** The socket opened (after the config frame went): what was queued goes now, in order. */
  open(): void {
    this.opened = true;
    const waiting = this.queue;
    this.queue = [];
    for (const chunk of waiting) {
      this.pending -= chunk.byteLength;
      this.offer(chunk, chunk.byteLength);
    }
  }

  /**
   * Send what is held, then the end-of-audio frame (ws sends in order). False, after reporting
   * `lost`, when the socket is no longer open.
   */
  end(): boolean {
    const ws = this.ws!;
    if (ws.readyState !== WebSocket.OPEN) {
      this.host.lost();
      return false;
    }
    this.flushHeld();
    ws.send('');
    return true;
  }

  /**
   * Send a chunk now when the socket is idle (never delayed then); hold it when the socket is
   * backed up, to go with the others held as one frame when the socket drains.
   */
  private offer(chunk: Uint8Array, len: number): void {
    this.pending += len;
    // Held only while a frame of ours is still being written: its callback sends the rest.
    if (this.heldBytes === 0 && (len >= COALESCE_BYTES || this.inFlightHead === this.inFlight.length)) {
      this.sendFrame(chunk, len);
      return;
    }
    if (len >= COALESCE_BYTES) {
      this.flushHeld();
      this.sendFrame(chunk, len);
      return;
    }
    if (this.heldBytes + len > COALESCE_BYTES) this.flushHeld();
    const held = (this.held ??= Buffer.allocUnsafe(COALESCE_BYTES));
    held.set(chunk, this.heldBytes);
    this.heldBytes += len;
  }

  /** Send what is held as one frame (the chunks in the order read). */
  private flushHeld(): void {
    const bytes = this.heldBytes;
    if (bytes === 0) return;
    const frame = this.held!.subarray(0, bytes);
    // A fresh buffer for the next frame: ws may still hold this one (it queues while busy).
    this.held = undefined;
    this.heldBytes = 0;
    this.sendFrame(frame, bytes);
  }

  /** One binary frame; its bytes count as sent when ws calls back without an error. */
  private sendFrame(frame: Uint8Array, len: number): void {
    this.inFlight.push(len);
    this.ws!.send(frame, BINARY, this.onFlushed);
  }

  private flushed(err: Error | undefined): void {
    const len = this.inFlight[this.inFlightHead++]!;
    const drained = this.inFlightHead === this.inFlight.length;
    if (drained) {
      this.inFlight.length = 0;
      this.inFlightHead = 0;
    } else if (this.inFlightHead >= 1024) {
      this.inFlight.splice(0, this.inFlightHead);
      this.inFlightHead = 0;
    }
    this.pending -= len;
    if (err) {
      this.host.lost();
      return;
    }
    this.stats.bytesSent += len;
    this.stats.framesSent++;
    // The socket drained: what was held goes now, as one frame.
    if (drained && this.heldBytes > 0 && this.ws!.readyState === WebSocket.OPEN) this.flushHeld();
    if (this.pending <= this.lowWater) this.host.drained();
  }

  private checkPressure(): void {
    const pending = this.pending;
    if (pending > this.stats.peakBufferedBytes) this.stats.peakBufferedBytes = pending;
    const { limits } = this;
    if (limits.pausable) {
      if (pending > limits.highWaterMark) this.host.pressure();
    } else if (pending > limits.maxBufferedBytes) {
      this.host.overflow(
        new SessionError(
          'backpressure_overflow',
          `audio arrives faster than the socket sends it: ${pending} bytes waiting exceed maxBufferedBytes=${limits.maxBufferedBytes}; use a pull-capable source (fromReadable) or raise the bound`,
          { retryable: false, audio: this.account() },
        ),
      );
    }
  }
}
