// The audio of one live call: pushed by the network whether anyone listens or not, so it is
// held from the start of the call until the first subscriber (a session may wait in a queue).
import { Observable, type SchedulerLike, type Subscriber } from 'rxjs';
import { setLiveWriter, withAudioMeta, type AudioChunk, type AudioObservable, type LiveSink, type LiveWriter } from '../audio/meta.js';
import { isRawFormat, msToBytes, type AudioFormat } from '../schema/audio.js';
import { ChunkLog } from '../audio/ChunkLog.js';
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
 * - A session's feed given `audio$` itself, before anyone subscribed, takes the audio without
 *   subscribing (a {@link LiveWriter}, internal): packets are then copied into the feed's log,
 *   and each frame is committed there instead of emitted (no second log, no fresh block, no
 *   emission per frame). A subscriber meanwhile gets each frame as a copy of its own.
 */
export class LiveAudio implements WheelTarget, LiveWriter {
  readonly audio$: AudioObservable;
  private kept: AudioChunk[] | undefined = [];
  private readonly subscribers = new Set<Subscriber<AudioChunk>>();
  private ended: { error?: unknown } | undefined;
  private readonly frameBytes: number;
  /**
   * With a grouping, the log packets are written into: its own (delivered up to `sent`, trimmed
   * there), or the sink's (committed up to `sent`; the sink's readers trim it). Both hold the
   * stream's positions from 0.
   */
  private log: ChunkLog | undefined;
  /** The feed writing in place of an emission (see {@link LiveAudio.attach}). */
  private sink: LiveSink | undefined;
  readonly blockBytes: number;
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
    this.blockBytes = Math.min(64 * 1024, Math.max(1, this.frameBytes) * FRAMES_PER_BLOCK);
    this.log = this.frameBytes > 0 ? new ChunkLog({ blockBytes: this.blockBytes }) : undefined;
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
    if (this.frameBytes > 0) setLiveWriter(this.audio$, this);
  }

  /** Bytes pushed or written so far. */
  get bytes(): number {
    return this.log ? this.log.written : this.ungroupedBytes;
  }

  /**
   * Write into `sink`'s log from now on (a session's feed), instead of emitting frames: only
   * with a grouping, before anyone subscribed and before the end, into an empty log. What was
   * kept (frames delivered to nobody yet, the frame being filled) moves there first, at the same
   * positions. Returns the detach: the frame being filled moves back to a log of our own.
   */
  attach(sink: LiveSink): (() => void) | undefined {
    const own = this.log;
    const kept = this.kept;
    const log = sink.log;
    if (own === undefined || kept === undefined || this.ended || this.sink !== undefined || log.written !== 0) return undefined;
    this.kept = undefined;
    for (const c of kept) log.write(c);
    own.commit(own.written);
    if (own.written > this.sent) log.write(own.slice(this.sent, own.written - this.sent));
    log.commit(this.sent);
    this.log = log;
    this.sink = sink;
    if (this.sent > 0) sink.committed(this.sent);
    return () => this.detach(sink);
  }

  /** The call ended: keep no hold on the sink's log (a finished call's leg may be kept long after), only its count. */
  private letGo(sink: LiveSink): void {
    const log = new ChunkLog({ blockBytes: this.blockBytes });
    log.skip(sink.log.written);
    this.log = log;
  }

  private detach(sink: LiveSink): void {
    if (this.sink !== sink) return;
    this.sink = undefined;
    const log = new ChunkLog({ blockBytes: this.blockBytes });
    log.skip(this.sent);
    log.write(sink.log.uncommitted());
    this.log = log;
  }

  /** A chunk of the caller's that it never writes again (a payload copy, silence): kept by reference. */
  push(chunk: AudioChunk): void {
    if (this.ended || chunk.byteLength === 0) return;
    if (this.log === undefined) {
      this.ungroupedBytes += chunk.byteLength;
      return this.deliver(chunk);
    }
    const log = this.log;
    if (log.written === this.sent) this.began();
    if (this.sink === undefined) log.append(chunk, true);
    else log.write(chunk);
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
    if (log.written === this.sent) this.began();
    // A plain view (not Buffer#subarray, whose FastBuffer costs more than the copy it leads to).
    log.write(new Uint8Array(src.buffer, src.byteOffset + start, end - start));
    // Most packets do not complete their frame: nothing to cut.
    if (log.written >= this.cutAt) this.cut();
  }

  /** The first bytes of a frame: its deadline goes on the wheel, one slot early so that it goes within frameMs. */
  private began(): void {
    this.wheel!.at(this.grouping!.scheduler.now() + this.grouping!.frameMs - WHEEL_RESOLUTION_MS, this, ++this.frameNo);
  }

  /** Deliver every frame the log completes (the log is read again after each: a sink may detach meanwhile). */
  private cut(): void {
    while (this.log!.written >= this.cutAt) {
      this.deliverFrom(this.cutAt - this.sent);
      // More bytes past the frame: they begin the next one, with a deadline of their own.
      if (this.log!.written > this.sent) this.began();
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
    const from = this.sent;
    this.sent += n;
    this.cutAt = this.sent - (this.sent % F) + (this.sent % F === 0 ? F : 2 * F);
    log.commit(this.sent);
    const sink = this.sink;
    if (sink === undefined) {
      const frame = log.slice(from, n);
      log.trim(this.sent);
      this.deliver(frame);
      return;
    }
    // The sink's blocks are reused once its readers let go: a subscriber gets a copy of its own.
    const copy = this.subscribers.size > 0 ? new Uint8Array(log.slice(from, n)) : undefined;
    sink.committed(n);
    if (copy !== undefined) for (const s of this.subscribers) s.next(copy);
  }

  /** The wheel: the frame begun as `frameNo` has waited its time; let what is held go. */
  onDeadline(frameNo: number): void {
    if (frameNo === this.frameNo) this.flush();
  }

  private flush(): void {
    const log = this.log;
    if (log !== undefined && log.written > this.sent) this.deliverFrom(log.written - this.sent);
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
    const sink = this.sink;
    this.sink = undefined;
    if (sink !== undefined) this.letGo(sink);
    sink?.completed();
    for (const s of [...this.subscribers]) s.complete();
    this.subscribers.clear();
  }

  fail(error: unknown): void {
    if (this.ended) return;
    this.ended = { error };
    this.wheel?.remove(this);
    const sink = this.sink;
    this.sink = undefined;
    if (sink !== undefined) this.letGo(sink);
    sink?.failed(error);
    for (const s of [...this.subscribers]) s.error(error);
    this.subscribers.clear();
  }

  get isEnded(): boolean {
    return this.ended !== undefined;
  }
}
