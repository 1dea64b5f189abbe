// underLimiter, the one way to run under a slot: a limiter with `request` starts the work in
// the granting tick; one with only `acquire` when its promise resolves; either way the slot is
// given back on every end, a wait is withdrawn on unsubscribe, and a lost slot ends the work.
import { defer, NEVER, Observable, of, lastValueFrom, toArray } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { Semaphore, SvcError, underLimiter, type ConcurrencyLimiter, type LimiterLease } from 'svc-stream';

/** A limiter of `n` slots with only the promise form, recording what happens to its leases. */
function promiseLimiter(n: number) {
  let free = n;
  const waiters: Array<{ resolve: (l: LimiterLease) => void; reject: (e: unknown) => void }> = [];
  const log: string[] = [];
  const lease = (): LimiterLease => {
    let released = false;
    return { release: () => { if (released) return; released = true; log.push('release'); free++; const w = waiters.shift(); if (w) { free--; w.resolve(lease()); } } };
  };
  const limiter: ConcurrencyLimiter = {
    acquire: (signal) => new Promise<LimiterLease>((resolve, reject) => {
      log.push('acquire');
      if (free > 0) { free--; resolve(lease()); return; }
      const w = { resolve, reject };
      waiters.push(w);
      signal?.addEventListener('abort', () => { waiters.splice(waiters.indexOf(w), 1); log.push('withdrawn'); reject(new SvcError('aborted', 'aborted')); }, { once: true });
    }),
  };
  return { limiter, log };
}

describe('underLimiter', () => {
  it('with a Semaphore: starts the work synchronously, and the slot goes back when it completes', async () => {
    const s = new Semaphore(1);
    let ran = false;
    const values = await lastValueFrom(underLimiter(s, defer(() => { ran = true; return of(1, 2); })).pipe(toArray()));
    expect(ran).toBe(true);
    expect(values).toEqual([1, 2]);
    await new Promise((r) => setImmediate(r));
    expect(s.inUse).toBe(0);
  });

  it('with only acquire: starts the work when the promise resolves, gives the slot back on error', async () => {
    const { limiter, log } = promiseLimiter(1);
    let ran = false;
    const work$ = underLimiter(limiter, defer(() => { ran = true; throw new Error('boom'); }));
    const failed = lastValueFrom(work$).catch((e: unknown) => (e as Error).message);
    expect(ran).toBe(false);
    expect(await failed).toBe('boom');
    expect(ran).toBe(true);
    expect(log).toEqual(['acquire', 'release']);
  });

  it('an unsubscribe while waiting withdraws the request; while running, gives the slot back', async () => {
    const { limiter, log } = promiseLimiter(1);
    const running = underLimiter(limiter, NEVER).subscribe();
    await Promise.resolve();
    const waiting = underLimiter(limiter, NEVER).subscribe();
    await Promise.resolve();
    waiting.unsubscribe();
    running.unsubscribe();
    expect(log).toEqual(['acquire', 'acquire', 'withdrawn', 'release']);
  });

  it("errors with the acquire's error", async () => {
    const refusing: ConcurrencyLimiter = { acquire: () => Promise.reject(new SvcError('slot_timeout', 'no slot')) };
    await expect(lastValueFrom(underLimiter(refusing, of(1)))).rejects.toMatchObject({ code: 'slot_timeout' });
  });

  it('a slot lost while held unsubscribes the work and errors with lease_lost', async () => {
    const lost = new AbortController();
    let released = 0;
    const limiter: ConcurrencyLimiter = { acquire: () => Promise.resolve({ release: () => void released++, lost: lost.signal }) };
    let unsubscribed = false;
    const work$ = new Observable<never>(() => () => void (unsubscribed = true));
    const result = lastValueFrom(underLimiter(limiter, work$)).catch((e: unknown) => e);
    await Promise.resolve();
    lost.abort('expired');
    const err = await result;
    expect(unsubscribed).toBe(true);
    expect(err).toBeInstanceOf(SvcError);
    expect((err as SvcError).code).toBe('lease_lost');
    expect((err as SvcError).retryable).toBe(true);
    expect(released).toBe(1);
  });

  it('a lease already lost when granted ends the work before it starts', async () => {
    let ran = false;
    const limiter: ConcurrencyLimiter = { acquire: () => Promise.resolve({ release: () => undefined, lost: AbortSignal.abort(new SvcError('lease_lost', 'gone')) }) };
    const err = await lastValueFrom(underLimiter(limiter, defer(() => { ran = true; return of(1); }))).catch((e: unknown) => e);
    expect(ran).toBe(false);
    expect(err).toMatchObject({ code: 'lease_lost', message: 'gone' });
  });
});
