// The resilient layer's state union (src/session/resilienceState.ts), stepped through tables of
// events without any I/O: where a failure leads (reconnect or fail), when an outage ends, how
// attempts are counted, and that `ended` is never left.
import { describe, expect, it } from 'vitest';
import { DEFAULT_RECONNECT, type ReconnectPolicy } from '../../src/session/reconnect.js';
import { initialResilienceState, resilienceReducer, type ResilienceEvent, type ResilienceState } from '../../src/session/resilienceState.js';

const POLICY: ReconnectPolicy = { ...DEFAULT_RECONNECT, initialDelayMs: 100, maxDelayMs: 1_000, jitter: 0, deadlineMs: 4_000, maxAttempts: 3, minUptimeMs: 5_000 };

const opened = (now: number): ResilienceEvent => ({ type: 'opened', now });
const failed = (now: number, resumable = true, commitMs = 0): ResilienceEvent => ({ type: 'failed', now, resumable, commitMs, random: 0 });
const event = (commitMs: number): ResilienceEvent => ({ type: 'event', commitMs });
const retry: ResilienceEvent = { type: 'retry' };
const uptime: ResilienceEvent = { type: 'uptime' };

/** Each step: an event, then the phase (and, where given, more of the state) it must lead to. */
type Step = [ResilienceEvent, Partial<ResilienceState> & { phase: ResilienceState['phase'] }];

const CASES: Array<{ name: string; steps: Step[] }> = [
  {
    name: 'the first session fails before it opened: fails at once (a wrong key, a service down)',
    steps: [[failed(0), { phase: { status: 'ended', how: 'failed' } }]],
  },
  {
    name: 'the first session opens paused (a backed-up socket) and fails: reconnected, like one that opened streaming',
    steps: [
      [opened(0), { phase: { status: 'open', proving: false } }],
      [failed(1_000), { phase: { status: 'waiting', delayMs: 100 }, tries: 1, outageSince: 1_000, downSince: 1_000 }],
      [retry, { phase: { status: 'connecting', first: false } }],
      [opened(1_200), { phase: { status: 'open', proving: true }, downSince: undefined, outageSince: 1_000 }],
      [event(0), { phase: { status: 'open', proving: false }, outageSince: undefined }],
    ],
  },
  {
    name: 'a failure the table says no new session cures: fails',
    steps: [
      [opened(0), { phase: { status: 'open', proving: false } }],
      [failed(500, false), { phase: { status: 'ended', how: 'failed' } }],
    ],
  },
  {
    name: 'sessions that die young do not end the outage: the deadline runs through them',
    steps: [
      [opened(0), { phase: { status: 'open', proving: false } }],
      [failed(1_000), { phase: { status: 'waiting', delayMs: 100 }, tries: 1, outageSince: 1_000 }],
      [retry, { phase: { status: 'connecting', first: false } }],
      [opened(1_100), { phase: { status: 'open', proving: true } }],
      [failed(1_300), { phase: { status: 'waiting', delayMs: 200 }, tries: 2, outageSince: 1_000 }],
      [retry, { phase: { status: 'connecting', first: false } }],
      [opened(1_500), { phase: { status: 'open', proving: true } }],
      // The last wait is cut at the deadline (4 s after the outage began: 1 000 + 4 000 − 4 800).
      [failed(4_800), { phase: { status: 'waiting', delayMs: 200 }, tries: 3, outageSince: 1_000 }],
      [retry, { phase: { status: 'connecting', first: false } }],
      [failed(5_000), { phase: { status: 'ended', how: 'failed' } }],
    ],
  },
  {
    name: 'a session that stays up minUptimeMs ends the outage: the next failure starts a new deadline',
    steps: [
      [opened(0), { phase: { status: 'open', proving: false } }],
      [failed(1_000), { phase: { status: 'waiting', delayMs: 100 }, outageSince: 1_000 }],
      [retry, { phase: { status: 'connecting', first: false } }],
      [opened(1_100), { phase: { status: 'open', proving: true } }],
      [uptime, { phase: { status: 'open', proving: false }, outageSince: undefined }],
      [failed(30_000), { phase: { status: 'waiting', delayMs: 200 }, tries: 2, outageSince: 30_000 }],
    ],
  },
  {
    name: 'attempts count in a row until the commit point moves past the last failure',
    steps: [
      [opened(0), { phase: { status: 'open', proving: false } }],
      [failed(1_000, true, 2_000), { tries: 1, failedAtCommitMs: 2_000, phase: { status: 'waiting', delayMs: 100 } }],
      [retry, { phase: { status: 'connecting', first: false } }],
      [opened(1_100), { phase: { status: 'open', proving: true } }],
      [event(2_000), { tries: 1, phase: { status: 'open', proving: false } }],
      [event(2_500), { tries: 0, phase: { status: 'open', proving: false } }],
    ],
  },
  {
    name: 'maxAttempts failures in a row without progress: fails',
    steps: [
      [opened(0), { phase: { status: 'open', proving: false } }],
      [failed(10), { tries: 1, phase: { status: 'waiting', delayMs: 100 } }],
      [retry, { phase: { status: 'connecting', first: false } }],
      [failed(200), { tries: 2, phase: { status: 'waiting', delayMs: 200 } }],
      [retry, { phase: { status: 'connecting', first: false } }],
      [failed(500), { tries: 3, phase: { status: 'waiting', delayMs: 400 } }],
      [retry, { phase: { status: 'connecting', first: false } }],
      [failed(1_000), { phase: { status: 'ended', how: 'failed' } }],
    ],
  },
  {
    name: 'done completes; ended is never left, whatever comes after',
    steps: [
      [opened(0), { phase: { status: 'open', proving: false } }],
      [{ type: 'done' }, { phase: { status: 'ended', how: 'done' } }],
      [failed(10), { phase: { status: 'ended', how: 'done' } }],
      [{ type: 'stopped', how: 'closed' }, { phase: { status: 'ended', how: 'done' } }],
    ],
  },
  {
    name: 'unsubscribed while waiting: closed, the backoff goes with it',
    steps: [
      [opened(0), { phase: { status: 'open', proving: false } }],
      [failed(10), { phase: { status: 'waiting', delayMs: 100 } }],
      [{ type: 'stopped', how: 'closed' }, { phase: { status: 'ended', how: 'closed' } }],
      [retry, { phase: { status: 'ended', how: 'closed' } }],
    ],
  },
];

describe('resilienceReducer (table)', () => {
  it.each(CASES)('$name', ({ steps }) => {
    let state = initialResilienceState;
    for (const [ev, expected] of steps) {
      state = resilienceReducer(state, ev, POLICY);
      expect(state, `${ev.type}`).toMatchObject(expected);
    }
  });

  it('an event that does not apply returns the same object (nothing to enter)', () => {
    const s = initialResilienceState;
    for (const ev of [retry, uptime, event(5)]) expect(resilienceReducer(s, ev, POLICY)).toBe(s);
    const open = resilienceReducer(s, opened(0), POLICY);
    expect(resilienceReducer(open, opened(1), POLICY)).toBe(open);
    expect(resilienceReducer(open, retry, POLICY)).toBe(open);
  });
});
