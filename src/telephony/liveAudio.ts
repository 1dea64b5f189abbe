// The audio of one live call: pushed by the network whether anyone listens or not, so it is
// held from the start of the call until the first subscriber (a session may wait in a queue).
import { Observable, type SchedulerLike, type Subscriber } from 'rxjs';
import { withAudioMeta, type AudioChunk, type AudioObservable } from '../audio/meta.js';
import { isRawFormat, msToBytes, type AudioFormat } from '../schema/audio.js';
import { TimerWheel, WHEEL_RESOLUTION_MS, type WheelTarget } from './timerWheel.js';

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

/**
 * A hot audio stream fed by `push`/`end`/`fail`.
 *
 * - Hot: chunks arrive from the network. Until the first subscription they are kept (all of
 *   them: a queued call keeps its audio from the first packet); the first subscriber gets
 *   them at once, then live chunks. Later subscribers get live chunks only.
 * - Completes (or errors) every subscriber when the call ends; a subscriber after the end
 *   gets the end at once (the first one after the kept audio).
 * - Nothing pauses the network: backpressure cannot reach a UDP sender.
 * - With a grouping (`frameMs` on the source), chunks are joined into one chunk of `frameMs` of
 *   audio before they go on; a frame that is not full goes before its oldest chunk has waited
 *   `frameMs` (from the process's one timer wheel, no timer per call), and at the end.
 */
export class LiveAudio implements WheelTarget {
  readonly audio$: AudioObservable;
  private kept: AudioChunk[] | undefined = [];
  private readonly subscribers = new Set<Subscriber<AudioChunk>>();
  private ended: { error?: unknown } | undefined;
  /** Bytes pushed so far. */
  bytes = 0;
  private readonly frameBytes: number;
  private held: Uint8Array | undefined;
  private heldBytes = 0;
  /** Counts frames begun: a deadline on the wheel for an earlier frame is stale. */
  private frameNo = 0;
  private readonly wheel: TimerWheel | undefined;

  constructor(
    format: AudioFormat,
    private readonly grouping?: LiveGrouping | undefined,
  ) {
    // Only raw audio is grouped by duration (not a container's pages).
    this.frameBytes = grouping && grouping.frameMs > 0 && isRawFormat(format) ? msToBytes(format, grouping.frameMs) : 0;
    this.wheel = this.frameBytes > 0 ? TimerWheel.of(grouping!.scheduler) : undefined;
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
    this.audio$ = withAudioMeta(source, { format });
  }

  push(chunk: AudioChunk): void {
    const len = chunk.byteLength;
    if (this.ended || len === 0) return;
    const F = this.frameBytes;
    if (F === 0) {
      this.bytes += len;
      return this.deliver(chunk);
    }
    // Frames are windows of the stream: frame k is bytes [k·F, (k+1)·F), so a frame that went
    // early (a gap, a pause) is followed by the rest of its window, and every byte keeps its place.
    for (let off = 0; off < len; ) {
      const inWindow = this.bytes % F;
      const take = Math.min(F - inWindow, len - off);
      if (this.heldBytes === 0 && take === F) {
        // A whole window in one piece: on as it is, no copy.
        this.deliver(off === 0 && take === len ? chunk : chunk.subarray(off, off + take));
      } else {
        if (this.heldBytes === 0) this.begin(F - inWindow);
        this.held!.set(off === 0 && take === len ? chunk : chunk.subarray(off, off + take), this.heldBytes);
        this.heldBytes += take;
      }
      off += take;
      this.bytes += take;
      if (this.heldBytes > 0 && this.bytes % F === 0) this.flush();
    }
  }

  /**
   * Bytes `start`–`end` of `src`, borrowed (a socket's buffer): copied before this returns, into
   * the frame being filled, or, without grouping, into a chunk of their own.
   */
  write(src: Buffer, start: number, end: number): void {
    if (this.ended || end <= start) return;
    const F = this.frameBytes;
    if (F === 0 || end - start >= F || end - start > F - (this.bytes % F)) {
      const copy = new Uint8Array(end - start);
      copy.set(src.subarray(start, end));
      return this.push(copy);
    }
    // The common case: the bytes fit in the window being filled.
    if (this.heldBytes === 0) this.begin(F - (this.bytes % F));
    this.held!.set(src.subarray(start, end), this.heldBytes);
    this.heldBytes += end - start;
    this.bytes += end - start;
    if (this.bytes % F === 0) this.flush();
  }

  /** A new frame for the rest of the window (`room` bytes), due on the wheel within frameMs. */
  private begin(room: number): void {
    this.held = new Uint8Array(room);
    // Due one wheel slot early, so that the frame goes within frameMs of its first chunk.
    this.wheel!.at(this.grouping!.scheduler.now() + this.grouping!.frameMs - WHEEL_RESOLUTION_MS, this, ++this.frameNo);
  }

  /** The wheel: the frame begun as `frameNo` has waited its time; let it go if it is still held. */
  onDeadline(frameNo: number): void {
    if (frameNo === this.frameNo && this.heldBytes > 0) this.flush();
  }

  private flush(): void {
    if (this.heldBytes === 0) return;
    const frame = this.heldBytes === this.held!.byteLength ? this.held! : this.held!.subarray(0, this.heldBytes);
    this.held = undefined;
    this.heldBytes = 0;
    this.deliver(frame);
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
