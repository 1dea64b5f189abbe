// The audio of one live call: pushed by the network whether anyone listens or not, so it is
// held from the start of the call until the first subscriber (a session may wait in a queue).
import { Observable, type Subscriber } from 'rxjs';
import { withAudioMeta, type AudioChunk, type AudioObservable } from '../audio/meta.js';
import type { AudioFormat } from '../schema/audio.js';

/**
 * A hot audio stream fed by `push`/`end`/`fail`.
 *
 * - Hot: chunks arrive from the network. Until the first subscription they are kept (all of
 *   them: a queued call keeps its audio from the first packet); the first subscriber gets
 *   them at once, then live chunks. Later subscribers get live chunks only.
 * - Completes (or errors) every subscriber when the call ends; a subscriber after the end
 *   gets the end at once (the first one after the kept audio).
 * - Nothing pauses the network: backpressure cannot reach a UDP sender.
 */
export class LiveAudio {
  readonly audio$: AudioObservable;
  private kept: AudioChunk[] | undefined = [];
  private readonly subscribers = new Set<Subscriber<AudioChunk>>();
  private ended: { error?: unknown } | undefined;
  /** Bytes pushed so far. */
  bytes = 0;

  constructor(format: AudioFormat) {
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
    if (this.kept) this.kept.push(chunk);
    else for (const s of this.subscribers) s.next(chunk);
  }

  end(): void {
    if (this.ended) return;
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
