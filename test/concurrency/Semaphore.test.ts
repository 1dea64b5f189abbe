// The in-process Semaphore: one FIFO queue for run, acquire and request; permits never above
// the limit; run starts its work synchronously when a permit is free.
import { catchError, defer, NEVER, of, Subject } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { InputError, Semaphore, SvcError } from 'svc-stream';

const microtasks = () => new Promise<void>((r) => setImmediate(r));

describe('Semaphore.run', () => {
  it('grants in order, never above the limit, and releases on unsubscribe', async () => {
    const s = new Semaphore(2);
    const started: number[] = [];
    const subs = [0, 1, 2, 3].map((i) => s.run(defer(() => { started.push(i); return new Promise(() => undefined); })).subscribe());
    expect(started).toEqual([0, 1]);
    expect([s.inUse, s.waiting]).toEqual([2, 2]);
    subs[2]!.unsubscribe(); // leaves the queue without ever running
    subs[0]!.unsubscribe();
    await Promise.resolve();
    expect(started).toEqual([0, 1, 3]);
    s.limit = 3;
    expect(s.peak).toBe(2);
    subs.forEach((x) => x.unsubscribe());
    await Promise.resolve();
    expect(s.inUse).toBe(0);
  });

  it('starts the work in the subscribing tick when a permit is free, and gives the permit back when it completes', async () => {
    const s = new Semaphore(1);
    let ran = false;
    const sub = s.run(defer(() => { ran = true; return of(1); })).subscribe();
    expect(ran).toBe(true);
    expect(sub.closed).toBe(true);
    await microtasks();
    expect([s.inUse, s.waiting]).toEqual([0, 0]);
  });

  it("lets a failed work's replacement reach its subscriber before the next waiting work starts", () => {
    // catchError unsubscribes the failed work (which releases the permit) before it emits the
    // replacement: the next work starts a microtask later, after the replacement.
    const s = new Semaphore(1);
    const order: string[] = [];
    const first = new Subject<string>();
    s.run(first)
      .pipe(catchError(() => of('replacement')))
      .subscribe((v) => order.push(v));
    s.run(defer(() => { order.push('next runs'); return NEVER; })).subscribe();
    expect(s.waiting).toBe(1);
    first.error(new Error('boom'));
    expect(order).toEqual(['replacement']);
    return microtasks().then(() => expect(order).toEqual(['replacement', 'next runs']));
  });
});

describe('Semaphore.acquire and request', () => {
  it('acquire shares the queue with run and releases once', async () => {
    const s = new Semaphore(1);
    const a = await s.acquire();
    const b = s.acquire();
    expect(s.waiting).toBe(1);
    a.release();
    a.release();
    const lb = await b;
    expect(s.inUse).toBe(1);
    lb.release();
    await microtasks();
    expect(s.inUse).toBe(0);
  });

  it('an aborted acquire leaves the queue with aborted, and the permit goes to the next', async () => {
    const s = new Semaphore(1);
    const held = await s.acquire();
    const controller = new AbortController();
    const aborted = s.acquire(controller.signal);
    const next = s.acquire();
    controller.abort();
    const err = await aborted.catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SvcError);
    expect((err as SvcError).code).toBe('aborted');
    expect(s.waiting).toBe(1);
    held.release();
    (await next).release();
    await expect(s.acquire(AbortSignal.abort())).rejects.toMatchObject({ code: 'aborted' });
  });

  it('request grants synchronously when a permit is free, in turn otherwise, and can be withdrawn', async () => {
    const s = new Semaphore(1);
    const granted: string[] = [];
    const releases: Array<() => void> = [];
    s.request((l) => { granted.push('a'); releases.push(() => l.release()); });
    expect(granted).toEqual(['a']);
    const withdrawB = s.request(() => granted.push('b'));
    s.request((l) => { granted.push('c'); releases.push(() => l.release()); });
    withdrawB();
    expect(s.waiting).toBe(1);
    releases.shift()!();
    await microtasks();
    expect(granted).toEqual(['a', 'c']);
    releases.shift()!();
  });

  it('raising the limit starts queued work; lowering it lets running work finish', async () => {
    const s = new Semaphore(1);
    const subs = [0, 1, 2].map(() => s.run(NEVER).subscribe());
    expect(s.inUse).toBe(1);
    s.limit = 3;
    expect([s.inUse, s.waiting]).toEqual([3, 0]);
    s.limit = 1;
    expect(s.inUse).toBe(3);
    subs.forEach((x) => x.unsubscribe());
    await microtasks();
    expect(s.inUse).toBe(0);
  });

  it('the limit is an integer from 1 to 25', () => {
    for (const bad of [0, 26, 1.5, Number.NaN]) expect(() => new Semaphore(bad)).toThrow(InputError);
    expect(() => { new Semaphore(2).limit = 0; }).toThrow(/1 to 25/);
  });
});
