// Dead-connection detection for one open WebSocket: anything that comes in (an event, a pong,
// a ping) is proof of life; when nothing has for a while, a ping asks; when nothing has for the
// deadline, the connection is declared dead. Every delay goes through the RxJS scheduler.
import { interval, type SchedulerLike, type Subscription } from 'rxjs';
import { InputError } from '../errors.js';

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

/** Resolve the `heartbeat` option: `false` turns it off; otherwise each field defaults. Throws InputError (`invalid_argument`) on a bad value. */
export function resolveHeartbeat(option: HeartbeatOptions | false | undefined): { intervalMs: number; timeoutMs: number } | undefined {
  if (option === false) return undefined;
  const intervalMs = option?.intervalMs ?? DEFAULT_HEARTBEAT.intervalMs;
  const timeoutMs = option?.timeoutMs ?? DEFAULT_HEARTBEAT.timeoutMs;
  if (!(intervalMs > 0) || !(timeoutMs > 0) || !Number.isFinite(intervalMs) || !Number.isFinite(timeoutMs)) {
    throw new InputError('invalid_argument', `heartbeat: intervalMs and timeoutMs must be positive numbers, got ${intervalMs} and ${timeoutMs}`, { path: 'heartbeat' });
  }
  return { intervalMs: Math.min(intervalMs, timeoutMs), timeoutMs };
}

/** Watches one connection; `touch()` on every inbound frame, `stop()` when the session ends. */
export class Heartbeat {
  private last: number;
  private lastPing = -Infinity;
  private readonly tick: Subscription;

  constructor(
    private readonly settings: { readonly intervalMs: number; readonly timeoutMs: number },
    private readonly scheduler: SchedulerLike,
    /** Send a ping (a no-op when the socket cannot). */
    ping: () => void,
    /** Called once, with the silence measured, when the deadline passed. */
    dead: (silentMs: number) => void,
  ) {
    this.last = scheduler.now();
    // Check at a quarter of the interval (at least every second), so the deadline is met
    // within that much, whatever the phase.
    const step = Math.max(1, Math.min(settings.intervalMs, settings.timeoutMs / 4, 1_000));
    this.tick = interval(step, scheduler).subscribe(() => {
      const silent = this.scheduler.now() - this.last;
      if (silent >= this.settings.timeoutMs) {
        this.stop();
        dead(silent);
      } else if (silent >= this.settings.intervalMs && this.scheduler.now() - this.lastPing >= this.settings.intervalMs) {
        this.lastPing = this.scheduler.now();
        ping();
      }
    });
  }

  /** Inbound traffic: the connection is alive now. */
  touch(): void {
    this.last = this.scheduler.now();
  }

  stop(): void {
    this.tick.unsubscribe();
  }
}
