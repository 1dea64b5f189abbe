// One clock per source for the live calls that group their 20 ms chunks into larger frames
// (`frameMs`): a single periodic action flushes any call whose oldest held chunk has waited a
// whole frame, so a call that pauses mid-frame is not held back, and no call needs a timer.
import type { SchedulerLike, Subscription } from 'rxjs';
import type { LiveAudio } from './liveAudio.js';

/** The shared flush clock of one source's grouping live streams. */
export class FrameClock {
  private readonly streams = new Set<LiveAudio>();
  private action: Subscription | undefined;

  constructor(
    /** The latency budget: the longest a chunk is held before its frame goes. */
    readonly frameMs: number,
    private readonly scheduler: SchedulerLike,
  ) {}

  /** Watch `live` until it ends. */
  add(live: LiveAudio): void {
    this.streams.add(live);
    if (this.action) return;
    // Ticks at half the budget: a held chunk waits at most 1.5 × frameMs when its call pauses.
    const period = Math.max(1, this.frameMs / 2);
    const clock = this;
    this.action = this.scheduler.schedule(function tick() {
      const now = clock.scheduler.now();
      for (const s of clock.streams) {
        if (s.isEnded) clock.streams.delete(s);
        else s.flushOlderThan(now - clock.frameMs);
      }
      if (clock.streams.size === 0) {
        clock.action = undefined;
        return;
      }
      this.schedule(undefined, period);
    }, period);
  }

  /** Stop the clock (the source was torn down). */
  stop(): void {
    this.action?.unsubscribe();
    this.action = undefined;
    this.streams.clear();
  }
}
