// Virtual time moved by hand, for tests whose timers must fire on cue while their sockets stay real.
import { VirtualTimeScheduler } from 'rxjs';

/** A scheduler and `advance(ms)`, which runs every timer due within `ms` and leaves the clock there. */
export function virtualTime(): { scheduler: VirtualTimeScheduler; advance(ms: number): void } {
  const scheduler = new VirtualTimeScheduler();
  let now = 0;
  return {
    scheduler,
    advance(ms: number) {
      now += ms;
      scheduler.maxFrames = now;
      scheduler.flush();
      // flush() moves the clock only to the last timer it ran.
      scheduler.frame = now;
    },
  };
}
