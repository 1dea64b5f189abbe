// Dead-connection detection for one open WebSocket: anything that comes in (an event, a pong,
// a ping) is proof of life; when nothing has for a while, a ping asks; when nothing has for the
// deadline, the connection is declared dead. The checks are on the process's one timer wheel
// (an RxJS scheduler underneath), not a timer per session.
import type { SchedulerLike } from 'rxjs';
import { TimerWheel, type WheelTarget } from '../internal/timerWheel.js';
import { InputError } from '../errors/index.js';

/**
 * The heartbeat of a streaming session: a WebSocket ping after `intervalMs` without inbound
 * traffic, and failure (`heartbeat_timeout`, retryable) after `timeoutMs` without any. Any
 * inbound frame counts as liveness, so a busy session sends no ping at all.
 */
export interface HeartbeatOptions {
  /** Ping when nothing came in for this long, and check this often. Default 5000 ms. */
  readonly intervalMs?: number | undefined;
  /** Declare the connection dead when nothing came in for this long. Default 15 000 ms. */
  readonly timeoutMs?: number | undefined;
}

/** The heartbeat's defaults: a ping after 5 s of silence, dead after 15 s. */
export const DEFAULT_HEARTBEAT = { intervalMs: 5_000, timeoutMs: 15_000 } as const;

/** The heartbeat as a session runs it: both fields given, `intervalMs` at most `timeoutMs`. */
export interface HeartbeatSettings {
  readonly intervalMs: number;
  readonly timeoutMs: number;
}

/** Resolve the `heartbeat` option: `false` turns it off; otherwise each field defaults. Throws InputError (`invalid_argument`) on a bad value. */
export function resolveHeartbeat(option: HeartbeatOptions | false | undefined): HeartbeatSettings | undefined {
  if (option === false) return undefined;
  const intervalMs = option?.intervalMs ?? DEFAULT_HEARTBEAT.intervalMs;
  const timeoutMs = option?.timeoutMs ?? DEFAULT_HEARTBEAT.timeoutMs;
  if (!(intervalMs > 0) || !(timeoutMs > 0) || !Number.isFinite(intervalMs) || !Number.isFinite(timeoutMs)) {
    throw new InputError('invalid_argument', `heartbeat: intervalMs and timeoutMs must be positive numbers, got ${intervalMs} and ${timeoutMs}`, { path: 'heartbeat' });
  }
  return { intervalMs: Math.min(intervalMs, timeoutMs), timeoutMs };
}

/** Watches one connection; `touch()` on every inbound frame, `stop()` when the session ends. */
export class Heartbeat implements WheelTarget {
  private last: number;
  private lastPing = -Infinity;
  private stopped = false;
  /** The process's one timer wheel: a session's checks share one periodic action with every other deadline. */
  private readonly wheel: TimerWheel;

  constructor(
    private readonly settings: HeartbeatSettings,
    private readonly scheduler: SchedulerLike,
    /** Send a ping (a no-op when the socket cannot). */
    private readonly ping: () => void,
    /** Called once, with the silence measured, when the deadline passed. */
    private readonly dead: (silentMs: number) => void,
  ) {
    this.last = scheduler.now();
    this.wheel = TimerWheel.of(scheduler);
    this.wheel.at(this.last + settings.intervalMs, this, 0);
  }

  /** Inbound traffic: the connection is alive now (the check due later finds it so). */
  touch(): void {
    this.last = this.scheduler.now();
  }

  /** The wheel: the next check is due (checked lazily: traffic since only moves the next one on). */
  onDeadline(_token: number, now: number): void {
    if (this.stopped) return;
    const { intervalMs, timeoutMs } = this.settings;
    const silent = now - this.last;
    if (silent >= timeoutMs) {
      this.stop();
      this.dead(silent);
      return;
    }
    if (silent >= intervalMs && now - this.lastPing >= intervalMs) {
      this.lastPing = now;
      this.ping();
    }
    // Next: a ping when the silence reaches the interval (again), or death at the deadline.
    const nextPing = Math.max(this.last, this.lastPing) + intervalMs;
    this.wheel.at(Math.min(nextPing, this.last + timeoutMs), this, 0);
  }

  stop(): void {
    this.stopped = true;
    this.wheel.remove(this);
  }
}
