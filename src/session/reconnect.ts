// The reconnect policy of a streaming session: its options and defaults, and the backoff
// between attempts (which failures a new session can cure is closeErrors.ts's to say). No I/O.
import { InputError } from '../errors/index.js';

/**
 * How a session reconnects after a retryable failure (see docs/resilience.md). Every field is
 * optional; `reconnect: false` turns reconnecting off.
 */
export interface ReconnectOptions {
  /** Attempts in a row without progress (a clip finalized past the point of the last failure) before giving up. Default 8. */
  readonly maxAttempts?: number | undefined;
  /** Delay before the first attempt. Default 250 ms; doubles each attempt. */
  readonly initialDelayMs?: number | undefined;
  /** Longest delay between attempts. Default 5000 ms. */
  readonly maxDelayMs?: number | undefined;
  /** Share of each delay drawn at random, 0 (none) to 1 (full jitter). Default 0.5. */
  readonly jitter?: number | undefined;
  /** Longest one outage may last (from the failure to a session open again). Default 60 000 ms. */
  readonly deadlineMs?: number | undefined;
  /** Audio kept for replay since the commit point (the end of the last finalized clip). Default 30 000 ms. */
  readonly replayMs?: number | undefined;
  /** Live audio buffered while no session is open, beyond the replay window. Default 30 000 ms. */
  readonly outageMs?: number | undefined;
  /**
   * How long a new session must stay open, without an event, to count as progress (it ends
   * the outage, so the deadline starts again at the next failure). A session that has an event
   * counts at once. Default 5000 ms.
   */
  readonly minUptimeMs?: number | undefined;
}

/** {@link ReconnectOptions} with every default filled in. */
export interface ReconnectPolicy {
  readonly maxAttempts: number;
  readonly initialDelayMs: number;
  readonly maxDelayMs: number;
  readonly jitter: number;
  readonly deadlineMs: number;
  readonly replayMs: number;
  readonly outageMs: number;
  readonly minUptimeMs: number;
}

/** The defaults of {@link ReconnectOptions}. */
export const DEFAULT_RECONNECT: ReconnectPolicy = {
  maxAttempts: 8,
  initialDelayMs: 250,
  maxDelayMs: 5_000,
  jitter: 0.5,
  deadlineMs: 60_000,
  replayMs: 30_000,
  outageMs: 30_000,
  minUptimeMs: 5_000,
};

/** Resolve the `reconnect` option: undefined when off (`false`); InputError on a bad value. */
export function resolveReconnect(option: ReconnectOptions | boolean | undefined): ReconnectPolicy | undefined {
  if (option === false) return undefined;
  const given = option === true || option === undefined ? {} : option;
  const policy: ReconnectPolicy = { ...DEFAULT_RECONNECT };
  for (const [k, v] of Object.entries(given) as [keyof ReconnectPolicy, number | undefined][]) {
    if (v === undefined) continue;
    if (!(k in DEFAULT_RECONNECT)) throw new InputError('invalid_argument', `reconnect: unknown option ${k}`, { path: `reconnect.${k}` });
    const bad = typeof v !== 'number' || Number.isNaN(v) || v < 0 || (k === 'jitter' && v > 1) || (k === 'maxAttempts' && !Number.isInteger(v));
    if (bad) throw new InputError('invalid_argument', `reconnect.${k} must be ${k === 'jitter' ? 'between 0 and 1' : 'a number of 0 or more'}, got ${String(v)}`, { path: `reconnect.${k}` });
    (policy as Record<keyof ReconnectPolicy, number>)[k] = v;
  }
  return policy;
}

/** The delay before attempt `attempt` (1 for the first): exponential, capped, with jitter from `random` in [0, 1). */
export function backoffMs(policy: ReconnectPolicy, attempt: number, random: number): number {
  const base = Math.min(policy.maxDelayMs, policy.initialDelayMs * 2 ** Math.max(0, attempt - 1));
  return base * (1 - policy.jitter * random);
}
