// The outbound bytes of one streaming session: its position in the stream's ChunkLog (the log
// is its queue), the frames it cut from there and handed to the socket, and the pressure they
// make. A frame is a view of the log wherever the bytes lie in one segment of it.
import WebSocket from 'ws';
import { SessionError } from '../errors/index.js';
import type { AudioFeed } from './AudioFeed.js';
import type { StatsCounters } from './stats.js';

/**
 * The largest binary frame the sender cuts from the log: what waits while a frame is being
 * written goes as frames of up to this size (binary audio frames may be split anywhere, §3):
 * one frame, one mask, one write instead of one per chunk.
 */
const MAX_FRAME_BYTES = 64 * 1024;
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
}

/**
 * One session's reader of the stream's log. The session calls `attach` once the socket exists,
 * `open` on the handshake, `appended`/`sendNow` as audio arrives and `end` after the last
 * chunk. The bytes waiting are the log's from this session's position on, plus the frames
 * handed to the socket and not yet flushed; the sender counts `framesSent` and
 * `peakBufferedBytes`, and reports each flushed frame to the feed (`bytesSent`, `bytesReplayed`).
 */
export class AudioSender {
  private ws: WebSocket | undefined;
  private opened = false;
  /** Stream position of the next byte this session sends. */
  private pos: number;
  /** Stream position up to which this session's frames were flushed. */
  private flushedPos: number;
  /** The byte length of each frame sent and not yet flushed, oldest first (ws calls back in order). */
  private readonly inFlight: number[] = [];
  private inFlightHead = 0;
  private inFlightBytes = 0;
  /** One callback for every frame, instead of a closure per chunk. */
  private readonly onFlushed = (err?: Error): void => this.flushed(err);
  private readonly lowWater: number;
  /** Set once the session stops sending audio (closing, or ended): nothing more is cut from the log. */
  private halted = false;
  /**
   * Frames cut before the log's tail, ever, and their count when the tail last went. While full
   * frames keep being cut (a source reading faster than the socket, in bursts), the tail waits
   * an event-loop turn at a time to become one: see {@link AudioSender.pump}.
   */
  private fullFrames = 0;
  private tailMark = 0;
  /** The turn the tail waits for, and the count of full frames when it was armed. */
  private tailTurn: NodeJS.Immediate | undefined;
  private tailArmedAt = 0;
  private readonly onTailTurn = (): void => this.tailTurnCame();

  constructor(
    private readonly feed: AudioFeed,
    /** The connection's own figures: frames flushed, the peak of bytes waiting. */
    private readonly stats: StatsCounters,
    private readonly host: AudioSenderHost,
    private readonly limits: AudioSenderLimits,
    /** Where in the stream this session starts. */
    from: number,
  ) {
    this.lowWater = limits.highWaterMark / 2;
    this.pos = from;
    this.flushedPos = from;
  }

  /** The socket the frames go to (what arrives before `open` waits in the log). */
  attach(ws: WebSocket): void {
    this.ws = ws;
  }

  /** Send no more audio (the session is closing or ended); frames in flight still count when flushed. */
  halt(): void {
    this.halted = true;
    this.cancelTurn();
  }

  /** Stream position up to which this session's frames were flushed. */
  get flushedPosition(): number {
    return this.flushedPos;
  }

  /** Bytes waiting: in the log from this session's position, and in the socket unflushed. */
  get pending(): number {
    return this.feed.log.end - this.pos + this.inFlightBytes;
  }

  /** Whether a chunk of `len` bytes goes on at once as its own frame (nothing waits before it, the socket is free or it is a full frame). */
  sendsAtOnce(len: number): boolean {
    return (
      this.opened &&
      this.pos === this.feed.log.end &&
      (len >= MAX_FRAME_BYTES || (this.inFlightHead === this.inFlight.length && this.fullFrames === this.tailMark)) &&
      this.ws!.readyState === WebSocket.OPEN
    );
  }

  /** Send a chunk the log does not hold (it went past it: {@link AudioSender.sendsAtOnce}). */
  sendNow(chunk: Uint8Array, len: number): void {
    this.pos += len;
    if (len >= MAX_FRAME_BYTES) this.fullFrames++;
    this.sendFrame(chunk, len);
    this.checkPressure();
  }

  /**
   * Bytes were appended to the log: sent when the socket is free (or a full frame waits),
   * else left in the log until it is. Reports `lost` when the socket is past the point of sending.
   */
  appended(): void {
    // No socket yet (its key is being asked for): the bytes wait in the log.
    const state = this.ws === undefined ? WebSocket.CONNECTING : this.ws.readyState;
    if (this.opened ? state !== WebSocket.OPEN : state > WebSocket.OPEN) {
      // Nothing can go (a socket gone, a handshake refused): stop reading now, so the account
      // is the one of this moment (and a source with no I/O between chunks cannot spin).
      this.host.lost();
      return;
    }
    // Per chunk, most often: a frame is being written and less than a frame waits, so nothing
    // can go yet (the flush pumps). Said here in three field reads instead of a call to pump.
    if (this.opened && (this.inFlightHead === this.inFlight.length || this.feed.log.end - this.pos >= MAX_FRAME_BYTES)) this.pump(false);
    this.checkPressure();
  }

  /** The socket opened (after the config frame went): what waits goes now, in order. */
  open(): void {
    this.opened = true;
    this.pump(false);
  }

  /**
   * Send every byte left, then the end-of-audio frame (ws sends in order). False, after
   * reporting `lost`, when the socket is no longer open.
   */
  end(): boolean {
    const ws = this.ws!;
    if (ws.readyState !== WebSocket.OPEN) {
      this.host.lost();
      return false;
    }
    this.cancelTurn();
    this.pump(true);
    ws.send('');
    return true;
  }

  /**
   * Cut frames from the log while the socket takes them: everything when `all`; otherwise the
   * waiting bytes when no frame is in flight, or full frames while less than the high-water
   * mark is in flight. What is left waits in the log (no copy) for the next flush.
   *
   * The tail (the last bytes, short of a full frame) goes as soon as the socket is free, unless
   * full frames were cut since the tail last went: then the source is reading in bursts faster
   * than the socket (audio in memory, a file) and its next burst comes within an event-loop
   * turn, so the tail waits one turn at a time while bursts keep coming and goes as the head of
   * the next full frame. A live source (a chunk at a time to a free socket) never waits.
   */
  private pump(all: boolean): void {
    if (this.halted) return;
    const log = this.feed.log;
    const from = this.pos;
    while (this.pos < log.end) {
      const busy = this.inFlightHead < this.inFlight.length;
      if (!all && busy && (log.end - this.pos < MAX_FRAME_BYTES || this.inFlightBytes >= this.limits.highWaterMark)) break;
      const frame = log.frame(this.pos, MAX_FRAME_BYTES);
      const len = frame.byteLength;
      if (this.pos + len < log.end || len === MAX_FRAME_BYTES) this.fullFrames++;
      else if (!all && this.fullFrames !== this.tailMark) {
        this.waitTurn();
        break;
      }
      this.pos += len;
      this.sendFrame(frame, len);
    }
    // Nothing keeps what went unless the feed does (ws masks each frame into a buffer of its own as it is sent).
    if (this.pos !== from) this.feed.sentUpTo(this.pos);
  }

  /** The tail waits for the next turn of the event loop (a turn, not a delay: no timer). */
  private waitTurn(): void {
    if (this.tailTurn !== undefined) return;
    this.tailArmedAt = this.fullFrames;
    this.tailTurn = setImmediate(this.onTailTurn);
  }

  private cancelTurn(): void {
    if (this.tailTurn !== undefined) clearImmediate(this.tailTurn);
    this.tailTurn = undefined;
  }

  /**
   * A turn passed with the tail waiting: it goes unless the bursts went on (then it waits
   * another turn). While frames are still in flight the tail could not go anyway, and a turn
   * without a full frame proves nothing (the source may be held back by this very socket's
   * high-water mark): the last flush pumps again, and the tail waits a turn from there.
   */
  private tailTurnCame(): void {
    this.tailTurn = undefined;
    if (this.halted || this.ws!.readyState !== WebSocket.OPEN) return;
    if (this.inFlightHead < this.inFlight.length) return;
    if (this.fullFrames !== this.tailArmedAt) {
      this.waitTurn();
      return;
    }
    this.tailMark = this.fullFrames;
    this.pump(false);
  }

  /** One binary frame; its bytes count as sent when ws calls back without an error. */
  private sendFrame(frame: Uint8Array, len: number): void {
    this.inFlight.push(len);
    this.inFlightBytes += len;
    this.ws!.send(frame, BINARY, this.onFlushed);
  }

  private flushed(err: Error | undefined): void {
    const len = this.inFlight[this.inFlightHead++]!;
    if (this.inFlightHead === this.inFlight.length) {
      this.inFlight.length = 0;
      this.inFlightHead = 0;
    } else if (this.inFlightHead >= 1024) {
      this.inFlight.splice(0, this.inFlightHead);
      this.inFlightHead = 0;
    }
    this.inFlightBytes -= len;
    if (err) {
      this.host.lost();
      return;
    }
    this.feed.flushed(this.flushedPos, len);
    this.flushedPos += len;
    this.stats.framesSent++;
    if (this.ws!.readyState === WebSocket.OPEN) this.pump(false);
    if (this.pending <= this.lowWater) this.host.drained();
  }

  private checkPressure(): void {
    const pending = this.pending;
    if (pending > this.stats.peakBufferedBytes) this.stats.peakBufferedBytes = pending;
    const { limits } = this;
    if (this.feed.pausable) {
      if (pending > limits.highWaterMark) this.host.pressure();
    } else if (pending > limits.maxBufferedBytes) {
      this.host.overflow(
        new SessionError(
          'backpressure_overflow',
          `audio arrives faster than the socket sends it: ${pending} bytes waiting exceed maxBufferedBytes=${limits.maxBufferedBytes}; use a pull-capable source (fromReadable) or raise the bound`,
          { audio: this.feed.account() },
        ),
      );
    }
  }
}
