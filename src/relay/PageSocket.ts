// A page's socket as a relay writes to it: written while it holds less than the bound, then
// left to drain; one that stays full for the stall timeout is cut off (the page comes back
// with its Last-Event-ID); a keep-alive comment when it is idle. Both relays' pages use it.
import type { ServerResponse } from 'node:http';
import { timer, type SchedulerLike, type Subscription } from 'rxjs';

export class PageSocket {
  /** True while the relay waits for the socket to drain. */
  blocked = false;
  private stall: Subscription | undefined;

  constructor(
    readonly res: ServerResponse,
    private readonly stallTimeoutMs: number,
    private readonly scheduler: SchedulerLike,
    /** Told when the page is cut off (for the relay's counters). */
    private readonly onDropped: () => void,
  ) {}

  /** Wait for the socket to drain, then `resume`; a socket that stays full is gone or hopelessly slow: cut off. */
  waitForDrain(resume: () => void): void {
    if (this.blocked) return;
    this.blocked = true;
    this.stall = timer(this.stallTimeoutMs, this.scheduler).subscribe(() => {
      this.onDropped();
      this.res.destroy();
    });
    this.res.once('drain', () => {
      this.stall?.unsubscribe();
      this.blocked = false;
      resume();
    });
  }

  /** A comment line, so proxies keep an idle stream open; skipped when the socket is not empty. */
  heartbeat(finished: boolean): void {
    if (!finished && !this.blocked && this.res.writableLength === 0) this.res.write(': keep-alive\n\n');
  }

  /** Stop waiting (the stream ended). */
  stop(): void {
    this.stall?.unsubscribe();
  }
}
