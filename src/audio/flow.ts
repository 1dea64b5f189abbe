// Flow control between a session and a pull-capable audio source: the session pauses it
// above its high-water mark and resumes it when the socket has flushed. A gate can follow
// other gates (the source's gate follows each session reading it), so one source shared by
// several consumers reads at the pace of the slowest.

/** A gate a pull-capable source awaits before reading its next chunk. */
export class FlowControl {
  private pausedNow = false;
  private waiters: Array<() => void> = [];
  /** Gates this one also honours: it is paused while any of them is. */
  private readonly leaders = new Set<FlowControl>();
  /** Gates that honour this one, woken when it resumes. */
  private readonly followers = new Set<FlowControl>();

  /** True while this gate, or any gate it follows, is paused. */
  get paused(): boolean {
    if (this.pausedNow) return true;
    for (const leader of this.leaders) if (leader.paused) return true;
    return false;
  }

  /** True while some gate follows this one, that is while pausing it reaches a source. */
  get connected(): boolean {
    return this.followers.size > 0;
  }

  /** Stop the source: later {@link FlowControl.ready} calls wait until {@link FlowControl.resume}. */
  pause(): void {
    this.pausedNow = true;
  }

  /** Let the source read again and release every waiter (unless a gate it follows is still paused). */
  resume(): void {
    if (!this.pausedNow) return;
    this.pausedNow = false;
    this.wake();
  }

  /** Resolves at once when flowing, otherwise when resumed. */
  ready(): Promise<void> {
    if (!this.paused) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  /** Release every waiter, for teardown. */
  release(): void {
    this.resume();
  }

  /**
   * Honour `leader` too: this gate is paused while `leader` is, and wakes when it resumes.
   * Returns the function that stops following it. Gates must not follow each other in a cycle.
   */
  follow(leader: FlowControl): () => void {
    if (leader === this) return () => undefined;
    this.leaders.add(leader);
    leader.followers.add(this);
    return () => {
      if (!this.leaders.delete(leader)) return;
      leader.followers.delete(this);
      this.wake();
    };
  }

  /** Stop gating every gate that follows this one (a consumer that reads no more lets the source go on for the others). */
  detach(): void {
    for (const follower of [...this.followers]) {
      follower.leaders.delete(this);
      this.followers.delete(follower);
      follower.wake();
    }
  }

  private wake(): void {
    if (this.paused) return;
    const waiting = this.waiters;
    this.waiters = [];
    for (const w of waiting) w();
    for (const follower of this.followers) follower.wake();
  }
}
