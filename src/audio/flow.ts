// Flow control between a session and a pull-capable audio source: the session pauses it
// above its high-water mark and resumes it when the socket has flushed.

/** A gate a pull-capable source awaits before reading its next chunk. */
export class FlowControl {
  private pausedNow = false;
  private waiters: Array<() => void> = [];

  get paused(): boolean {
    return this.pausedNow;
  }

  /** Stop the source: later {@link FlowControl.ready} calls wait until {@link FlowControl.resume}. */
  pause(): void {
    this.pausedNow = true;
  }

  /** Let the source read again and release every waiter. */
  resume(): void {
    if (!this.pausedNow) return;
    this.pausedNow = false;
    const waiting = this.waiters;
    this.waiters = [];
    for (const w of waiting) w();
  }

  /** Resolves at once when flowing, otherwise when resumed. */
  ready(): Promise<void> {
    if (!this.pausedNow) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  /** Release every waiter, for teardown. */
  release(): void {
    this.resume();
  }
}
