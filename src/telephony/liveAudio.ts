// The audio of one live call: pushed by the network whether anyone listens or not, so it is
// held from the start of the call until the first subscriber (a session may wait in a queue).
import { Observable, type SchedulerLike, type Subscriber } from 'rxjs';
import { withAudioMeta, type AudioChunk, type AudioObservable } from '../audio/meta.js';
import { bytesPerSecond, isRawFormat, type AudioFormat } from '../schema/audio.js';
import type { FrameClock } from './frameClock.js';

/** How a live stream groups its chunks: into frames of `clock.frameMs` of audio, flushed by `clock`. */
export interface LiveGrouping {
  readonly clock: FrameClock;
  readonly scheduler: SchedulerLike;
}

/** Bytes in `frameMs` of a raw format, a whole number of sample frames; 0 (no grouping) for a container. */
export function frameBytesOf(format: AudioFormat, frameMs: number): number {
  if (!isRawFormat(format) || !(frameMs > 0)) return 0;
  const perMs = bytesPerSecond(format) / 1000;
  const unit = bytesPerSecond(format) / format.sample_rate;
  return Math.max(unit, Math.floor((frameMs * perMs) / unit) * unit);
}

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
 *   audio before they go on; a frame that is not full goes when its oldest chunk has waited
 *   `frameMs` (the source's shared clock), and at the end.
 */
export class LiveAudio {
  readonly audio$: AudioObservable;
  private kept: AudioChunk[] | undefined = [];
  private readonly subscribers = new Set<Subscriber<AudioChunk>>();
  private ended: { error?: unknown } | undefined;
  /** Bytes pushed so far. */
  bytes = 0;
  private readonly frameBytes: number;
  private held: Uint8Array | undefined;
  private heldBytes = 0;
  private heldSince = 0;

  constructor(
    format: AudioFormat,
    private readonly grouping?: LiveGrouping | undefined,
  ) {
    this.frameBytes = grouping ? frameBytesOf(format, grouping.clock.frameMs) : 0;
    if (this.frameBytes > 0) grouping!.clock.add(this);
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
    if (this.ended || chunk.byteLength === 0) return;
    this.bytes += chunk.byteLength;
    if (this.frameBytes === 0) return this.deliver(chunk);
    const len = chunk.byteLength;
    if (this.heldBytes + len > this.frameBytes) this.flush();
    if (len >= this.frameBytes) return this.deliver(chunk);
    if (this.heldBytes === 0) {
      this.held = new Uint8Array(this.frameBytes);
      this.heldSince = this.grouping!.scheduler.now();
    }
    this.held!.set(chunk, this.heldBytes);
    this.heldBytes += len;
    if (this.heldBytes === this.frameBytes) this.flush();
  }

  /** Let a partial frame go when its oldest chunk arrived at or before `since` (the shared clock). */
  flushOlderThan(since: number): void {
    if (this.heldBytes > 0 && this.heldSince <= since) this.flush();
  }

  private flush(): void {
    if (this.heldBytes === 0) return;
    const frame = this.heldBytes === this.frameBytes ? this.held! : this.held!.subarray(0, this.heldBytes);
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
    for (const s of [...this.subscribers]) s.complete();
    this.subscribers.clear();
  }

  fail(error: unknown): void {
    if (this.ended) return;
    this.ended = { error };
    for (const s of [...this.subscribers]) s.error(error);
    this.subscribers.clear();
  }

  get isEnded(): boolean {
    return this.ended !== undefined;
  }
}
