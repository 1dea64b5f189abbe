// One clock per process (per scheduler) for the deadlines of every live call and session: a frame
// not full, a packet waiting behind a gap, a leg gone quiet, a connection's heartbeat. A hashed wheel
// of 10 ms slots driven by one periodic action, instead of a timer per call armed and cancelled per packet.
import type { SchedulerLike, Subscription } from 'rxjs';

/** What the wheel calls back: `token` is what was passed to {@link TimerWheel.at}, so a stale deadline can be told from a live one. */
export interface WheelTarget {
  onDeadline(token: number, now: number): void;
}

/** Slot width, ms: a deadline fires at most this much after its time. */
export const WHEEL_RESOLUTION_MS = 10;
/** Slots in one turn of the wheel (a deadline further out waits in its slot for later turns). */
const SLOTS = 256;

/**
 * A hashed timer wheel on an RxJS scheduler.
 *
 * - `at(time, target, token)` asks for `target.onDeadline(token, now)` once, at the first tick
 *   at or after `time` (within {@link WHEEL_RESOLUTION_MS}). Nothing is allocated per deadline
 *   beyond two array slots; there is no cancel: a target that no longer cares ignores the token.
 * - One periodic action per wheel, running only while deadlines are pending.
 * - {@link TimerWheel.of} gives the one wheel of a scheduler (the process's, for
 *   `asyncScheduler`), so every source and call of a process shares it; tests on virtual time
 *   get their own.
 */
export class TimerWheel {
  private static readonly wheels = new WeakMap<SchedulerLike, TimerWheel>();

  /** The shared wheel of `scheduler`. */
  static of(scheduler: SchedulerLike): TimerWheel {
    let w = TimerWheel.wheels.get(scheduler);
    if (!w) {
      w = new TimerWheel(scheduler);
      TimerWheel.wheels.set(scheduler, w);
    }
    return w;
  }

  private readonly targets: WheelTarget[][] = Array.from({ length: SLOTS }, () => []);
  private readonly tokens: number[][] = Array.from({ length: SLOTS }, () => []);
  private readonly times: number[][] = Array.from({ length: SLOTS }, () => []);
  private pending = 0;
  /** The next slot index (absolute, in resolution units) the wheel has not yet visited. */
  private cursor = 0;
  private action: Subscription | undefined;

  private constructor(private readonly scheduler: SchedulerLike) {}

  /** Deadlines waiting. */
  get size(): number {
    return this.pending;
  }

  /** Call `target.onDeadline(token, now)` at the first tick at or after `time` (ms, the scheduler's clock). */
  at(time: number, target: WheelTarget, token: number): void {
    // An idle wheel starts at the current slot (not while a turn is visiting slots).
    if (this.action === undefined) this.cursor = Math.floor(this.scheduler.now() / WHEEL_RESOLUTION_MS);
    // Never behind the cursor: a deadline already past fires on the next tick.
    const abs = Math.max(this.cursor, Math.ceil(time / WHEEL_RESOLUTION_MS));
    const slot = abs % SLOTS;
    this.targets[slot]!.push(target);
    this.tokens[slot]!.push(token);
    this.times[slot]!.push(time);
    this.pending++;
    if (this.action === undefined) this.start();
  }

  private start(): void {
    const wheel = this;
    this.action = this.scheduler.schedule(function tick() {
      wheel.turn();
      if (wheel.pending === 0) {
        wheel.action = undefined;
        return;
      }
      this.schedule(undefined, WHEEL_RESOLUTION_MS);
    }, WHEEL_RESOLUTION_MS);
  }

  /** Visit every slot up to now; fire what is due, keep what belongs to a later turn. */
  private turn(): void {
    const now = this.scheduler.now();
    const last = Math.floor(now / WHEEL_RESOLUTION_MS);
    // A stalled loop does not make the wheel spin more than one turn.
    if (last - this.cursor >= SLOTS) this.cursor = last - SLOTS + 1;
    while (this.cursor <= last) {
      // Moved past first: a deadline added while this slot is visited goes to a later one.
      const slot = this.cursor++ % SLOTS;
      const targets = this.targets[slot]!;
      const n = targets.length;
      if (n === 0) continue;
      const tokens = this.tokens[slot]!;
      const times = this.times[slot]!;
      // Swapped out first: a target may add a deadline to this very slot while it is visited.
      this.targets[slot] = [];
      this.tokens[slot] = [];
      this.times[slot] = [];
      for (let i = 0; i < n; i++) {
        const time = times[i]!;
        if (time > now) {
          // A later turn of the wheel: back into the slot, unchanged.
          this.targets[slot]!.push(targets[i]!);
          this.tokens[slot]!.push(tokens[i]!);
          this.times[slot]!.push(time);
          continue;
        }
        this.pending--;
        targets[i]!.onDeadline(tokens[i]!, now);
      }
    }
  }

  /**
   * Forget every deadline of `target` (it ended), so a wheel with nothing left to do stops
   * ticking and holds no process open. Linear in the deadlines pending; called once per stream.
   */
  remove(target: WheelTarget): void {
    if (this.pending === 0) return;
    for (let s = 0; s < SLOTS; s++) {
      const targets = this.targets[s]!;
      if (targets.indexOf(target) < 0) continue;
      const tokens = this.tokens[s]!;
      const times = this.times[s]!;
      let w = 0;
      for (let i = 0; i < targets.length; i++) {
        if (targets[i] === target) continue;
        targets[w] = targets[i]!;
        tokens[w] = tokens[i]!;
        times[w] = times[i]!;
        w++;
      }
      this.pending -= targets.length - w;
      targets.length = w;
      tokens.length = w;
      times.length = w;
    }
    if (this.pending === 0) {
      this.action?.unsubscribe();
      this.action = undefined;
    }
  }

  /** Stop the clock and forget every deadline (tests; a process that shuts down its calls). */
  clear(): void {
    this.action?.unsubscribe();
    this.action = undefined;
    for (let s = 0; s < SLOTS; s++) {
      this.targets[s] = [];
      this.tokens[s] = [];
      this.times[s] = [];
    }
    this.pending = 0;
  }
}
