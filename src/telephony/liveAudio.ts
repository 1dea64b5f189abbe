// The audio of one live call: pushed by the network whether anyone listens or not, so it is
// held from the start of the call until the first subscriber (a session may wait in a queue).
import { Observable, type SchedulerLike, type Subscriber } from 'rxjs';
import { withAudioMeta, type AudioChunk, type AudioObservable } from '../audio/meta.js';
import { isRawFormat, msToBytes, type AudioFormat } from '../schema/audio.js';
import { ChunkLog } from '../audio/chunkLog.js';
import { TimerWheel, WHEEL_RESOLUTION_MS, type WheelTarget } from '../internal/timerWheel.js';

/** How a live stream groups its chunks: into frames of `frameMs` of audio, on the process's timer wheel of `scheduler`. */
export interface LiveGrouping {
  readonly frameMs: number;
  readonly scheduler: SchedulerLike;
}

/**
 * The frames of a live call by default, ms: 100 ms of audio per WebSocket frame, five 20 ms
 * packets. At most 100 ms more before the service hears a packet's audio (about 50 ms on
 * average), for a fifth of the sends; `frameMs: 20` gives the lowest latency.
 */
export const DEFAULT_LIVE_FRAME_MS = 100;

/** Frames per block of a live stream's log: a block allocated per this many frames (1.6 s of 100 ms G.711). */
const FRAMES_PER_BLOCK = 16;

/**
 * A hot audio stream fed by `push`/`write`/`end`/`fail`.
 *
 * - Hot: chunks arrive from the network. Until the first subscription they are kept (all of
 *   them: a queued call keeps its audio from the first packet); the first subscriber gets
 *   them at once, then live chunks. Later subscribers get live chunks only.
 * - Completes (or errors) every subscriber when the call ends; a subscriber after the end
 *   gets the end at once (the first one after the kept audio).
 * - Nothing pauses the network: backpressure cannot reach a UDP sender.
 * - With a grouping (`frameMs` on the source), the audio goes in frames of `frameMs`: windows of
 *   the stream (frame k is bytes k·F … (k+1)·F), cut from one `ChunkLog` (the library's one
 *   chunk grouper) that packets are copied into once. A frame that is not full goes within
 *   `frameMs` of its first byte (from the process's one timer wheel, no timer per call); the rest
 *   of its window goes with the next window, in one frame (a packet a little late costs no
 *   write of its own), and the last frame at the end. Every frame ends on a window's end but
 *   an early one and the last.
 * - Every chunk it emits is a buffer nobody writes again (`freshBuffers`), so a session keeps it
 *   for a resume without a copy.
 */
export class LiveAudio implements WheelTarget {
  readonly audio$: AudioObservable;
  private kept: AudioChunk[] | undefined = [];
  private readonly subscribers = new Set<Subscriber<AudioChunk>>();
  private ended: { error?: unknown } | undefined;
  private readonly frameBytes: number;
  /** The audio not yet delivered, with a grouping: delivered up to `sent`, trimmed there. */
  private readonly log: ChunkLog | undefined;
  private sent = 0;
  /** Stream position where the frame being filled ends: its window's end, or the next window's after an early frame. */
  private cutAt: number;
  /** Counts frames begun: a deadline on the wheel for an earlier frame is stale. */
  private frameNo = 0;
  private readonly wheel: TimerWheel | undefined;
  private ungroupedBytes = 0;

  constructor(
    format: AudioFormat,
    private readonly grouping?: LiveGrouping | undefined,
  ) {
    // Only raw audio is grouped by duration (not a container's pages).
    this.frameBytes = grouping && grouping.frameMs > 0 && isRawFormat(format) ? msToBytes(format, grouping.frameMs) : 0;
    this.wheel = this.frameBytes > 0 ? TimerWheel.of(grouping!.scheduler) : undefined;
    this.log = this.frameBytes > 0 ? new ChunkLog({ blockBytes: Math.min(64 * 1024, this.frameBytes * FRAMES_PER_BLOCK) }) : undefined;
    this.cutAt = this.frameBytes;
    const source = new Observable<AudioChunk>((subscriber) => {
      const kept = this.kept;
      this.kept = undefined;
      if (kept) for (const c of kept) subscriber.next(c);
      if (this.ended) {
        if (this.ended.error !== undefined) subscriber.error(this.ended.error);
        else subscriber.complete();
        return;
      }
      this.subscribers.add(subscriber);
      return () => this.subscribers.delete(subscriber);
    });
    this.audio$ = withAudioMeta(source, { format, freshBuffers: true });
  }

  /** Bytes pushed or written so far. */
  get bytes(): number {
    return this.log ? this.log.end : this.ungroupedBytes;
  }

  /** A chunk of the caller's that it never writes again (a payload copy, silence): kept by reference. */
  push(chunk: AudioChunk): void {
    if (this.ended || chunk.byteLength === 0) return;
    if (this.log === undefined) {
      this.ungroupedBytes += chunk.byteLength;
      return this.deliver(chunk);
    }
    if (this.log.end === this.sent) this.began();
    this.log.append(chunk, true);
    this.cut();
  }

  /**
   * Bytes `start`–`end` of `src`, borrowed (a socket's buffer): copied before this returns, once,
   * into the log's block (or, without grouping, into a chunk of their own).
   */
  write(src: Buffer, start: number, end: number): void {
    if (this.ended || end <= start) return;
    if (this.log === undefined) {
      const copy = new Uint8Array(end - start);
      copy.set(src.subarray(start, end));
      this.ungroupedBytes += end - start;
      return this.deliver(copy);
    }
    const log = this.log;
    if (log.end === this.sent) this.began();
    // A plain view (not Buffer#subarray, whose FastBuffer costs more than the copy it leads to).
    log.append(new Uint8Array(src.buffer, src.byteOffset + start, end - start), false);
    // Most packets do not complete their frame: nothing to cut.
    if (log.end >= this.cutAt) this.cut();
  }

  /** The first bytes of a frame: its deadline goes on the wheel, one slot early so that it goes within frameMs. */
  private began(): void {
    this.wheel!.at(this.grouping!.scheduler.now() + this.grouping!.frameMs - WHEEL_RESOLUTION_MS, this, ++this.frameNo);
  }

  /** Deliver every frame the log completes. */
  private cut(): void {
    const log = this.log!;
    while (log.end >= this.cutAt) {
      this.deliverFrom(this.cutAt - this.sent);
      // More bytes past the frame: they begin the next one, with a deadline of their own.
      if (log.end > this.sent) this.began();
    }
  }

  /**
   * The next `n` bytes of the log, as one chunk (a view of its block), then let them go. The
   * next frame ends at the next window's end; after an early frame (a partial window), at the
   * end of the window after that: the rest of a window whose frame went early goes with the
   * next window, not as a frame (a write) of its own.
   */
  private deliverFrom(n: number): void {
    const log = this.log!;
    const F = this.frameBytes;
    const frame = log.slice(this.sent, n);
    this.sent += n;
    this.cutAt = this.sent - (this.sent % F) + (this.sent % F === 0 ? F : 2 * F);
    log.trim(this.sent);
    this.deliver(frame);
  }

  /** The wheel: the frame begun as `frameNo` has waited its time; let what is held go. */
  onDeadline(frameNo: number): void {
    if (frameNo === this.frameNo) this.flush();
  }

  private flush(): void {
    const log = this.log;
    if (log !== undefined && log.end > this.sent) this.deliverFrom(log.end - this.sent);
  }

  private deliver(chunk: AudioChunk): void {
    if (this.kept) this.kept.push(chunk);
    else for (const s of this.subscribers) s.next(chunk);
  }

  end(): void {
    if (this.ended) return;
    this.flush();
    this.ended = {};
    this.wheel?.remove(this);
    for (const s of [...this.subscribers]) s.complete();
    this.subscribers.clear();
  }

  fail(error: unknown): void {
    if (this.ended) return;
    this.ended = { error };
    this.wheel?.remove(this);
    for (const s of [...this.subscribers]) s.error(error);
    this.subscribers.clear();
  }

  get isEnded(): boolean {
    return this.ended !== undefined;
  }
}
