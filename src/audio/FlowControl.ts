// Flow control between a session and a pull-capable audio source: the session pauses it
// above its high-water mark and resumes it when the socket has flushed. A gate can follow
// other gates (the source's gate follows each session reading it), so one source shared by
// several consumers reads at the pace of the slowest.

/** A gate a pull-capable source awaits before reading its next chunk. */
export class FlowControl {
  private pausedNow = false;
  /** How many of the gates it follows are paused now: `paused` reads two fields, per chunk. */
  private pausedLeaders = 0;
  private waiters: Array<() => void> = [];
  /** Gates this one also honours: it is paused while any of them is. */
  private readonly leaders = new Set<FlowControl>();
  /** Gates that honour this one, told when it pauses or resumes. */
  private readonly followers = new Set<FlowControl>();

  /** True while this gate, or any gate it follows, is paused. */
  get paused(): boolean {
    return this.pausedNow || this.pausedLeaders > 0;
  }

  /** True while some gate follows this one, that is while pausing it reaches a source. */
  get connected(): boolean {
    return this.followers.size > 0;
  }

  /** Stop the source: later {@link FlowControl.ready} calls wait until {@link FlowControl.resume}. */
  pause(): void {
    if (this.pausedNow) return;
    const was = this.paused;
    this.pausedNow = true;
    if (!was) this.changed(true);
  }

  /** Let the source read again and release every waiter (unless a gate it follows is still paused). */
  resume(): void {
    if (!this.pausedNow) return;
    this.pausedNow = false;
    if (!this.paused) this.changed(false);
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
    if (leader === this || this.leaders.has(leader)) return () => undefined;
    this.leaders.add(leader);
    leader.followers.add(this);
    if (leader.paused) this.leaderChanged(true);
    return () => {
      if (!this.leaders.delete(leader)) return;
      leader.followers.delete(this);
      if (leader.paused) this.leaderChanged(false);
    };
  }

  /** Stop gating every gate that follows this one (a consumer that reads no more lets the source go on for the others). */
  detach(): void {
    const paused = this.paused;
    for (const follower of [...this.followers]) {
      follower.leaders.delete(this);
      this.followers.delete(follower);
      if (paused) follower.leaderChanged(false);
    }
  }

  /** A leader paused (`true`) or resumed (`false`). */
  private leaderChanged(paused: boolean): void {
    const was = this.paused;
    this.pausedLeaders += paused ? 1 : -1;
    if (this.paused !== was) this.changed(this.paused);
  }

  /** This gate's own state changed: its followers hear of it; resumed, its waiters go. */
  private changed(paused: boolean): void {
    for (const follower of this.followers) follower.leaderChanged(paused);
    if (paused) return;
    const waiting = this.waiters;
    this.waiters = [];
    for (const w of waiting) w();
  }
}
