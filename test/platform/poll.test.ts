// The generic poll helper on virtual time: verdicts, transient retries, and teardown.
import { VirtualTimeScheduler } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { poll, type PollSpec } from 'svc-stream/platform';
import { settle } from './helpers.js';

function spec(check: PollSpec<number>['check']): PollSpec<number> {
  return {
    check,
    classify: (n) => (n >= 3 ? { kind: 'done' } : n < 0 ? { kind: 'failed', error: new Error(`bad ${n}`) } : { kind: 'pending' }),
    isTransient: (e) => e instanceof TypeError,
    deadlineError: () => new Error('deadline'),
    transientLimitError: (e, n) => new Error(`gave up after ${n}: ${(e as Error).message}`),
    abortedError: () => new Error('aborted'),
  };
}
async function drive(s: VirtualTimeScheduler, until: number, done: () => boolean): Promise<void> {
  for (let t = 0; t <= until && !done(); t += 5) {
    await settle();
    s.maxFrames = t;
    s.flush();
  }
}

describe('poll', () => {
  it('retries a check that throws synchronously as transient, then completes on done', async () => {
    const s = new VirtualTimeScheduler();
    let n = 0;
    const out: number[] = [];
    let end: unknown;
    poll(
      spec(() => {
        n++;
        if (n === 1) throw new TypeError('sync');
        return Promise.resolve(n);
      }),
      { intervalMs: 10, backoff: 1, scheduler: s },
    ).subscribe({ next: (v) => out.push(v), error: (e: unknown) => (end = e), complete: () => (end = 'complete') });
    await drive(s, 100, () => end !== undefined);
    expect(end).toBe('complete');
    expect(out).toEqual([2, 3]);
    expect(s.actions).toHaveLength(0);
  });

  it('emits a failed value, then errors with its verdict', async () => {
    const s = new VirtualTimeScheduler();
    const out: number[] = [];
    let end: unknown;
    poll(spec(async () => -1), { scheduler: s }).subscribe({ next: (v) => out.push(v), error: (e: unknown) => (end = e) });
    await drive(s, 10, () => end !== undefined);
    expect(out).toEqual([-1]);
    expect((end as Error).message).toBe('bad -1');
    expect(s.actions).toHaveLength(0);
  });

  it('aborts the in-flight check and clears every scheduled action on unsubscribe', async () => {
    const s = new VirtualTimeScheduler();
    let signal: AbortSignal | undefined;
    const sub = poll(
      spec((sig) => {
        signal = sig;
        return new Promise<number>(() => undefined);
      }),
      { scheduler: s, deadlineMs: 1000 },
    ).subscribe();
    expect(s.actions).toHaveLength(1); // the deadline
    sub.unsubscribe();
    expect(signal?.aborted).toBe(true);
    expect(s.actions).toHaveLength(0);
  });
});
