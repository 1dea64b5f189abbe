// Hand-written operators the way RxJS builds its own: a throw goes down the error channel once
// and unsubscribes upstream; a subscriber chained to its destination tears down with it.
import { Subject } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { operate, operatorSubscriber } from '../../src/internal/operate.js';

describe('operate', () => {
  it('a throw from init errors the subscriber', () => {
    const seen: unknown[] = [];
    new Subject<number>().pipe(operate<number, number>(() => { throw new Error('init'); })).subscribe({ error: (e: unknown) => seen.push((e as Error).message) });
    expect(seen).toEqual(['init']);
  });
});

describe('operatorSubscriber', () => {
  const doubled = operate<number, number>((source, subscriber) => {
    source.subscribe(operatorSubscriber<number>(subscriber, {
      next: (v) => {
        if (v < 0) throw new Error(`negative ${v}`);
        subscriber.next(v * 2);
      },
    }));
  });

  it('routes a throw from a handler to the error channel once, and unsubscribes upstream', () => {
    const source = new Subject<number>();
    const seen: string[] = [];
    source.pipe(doubled).subscribe({ next: (v) => seen.push(`next ${v}`), error: (e: unknown) => seen.push(`error ${(e as Error).message}`), complete: () => seen.push('complete') });
    source.next(1);
    source.next(-1);
    source.next(2);
    source.complete();
    expect(seen).toEqual(['next 2', 'error negative -1']);
    expect(source.observed).toBe(false);
  });

  it('passes what it has no handler for on, and runs finalize once however it ends', () => {
    let finalized = 0;
    const pass = operate<number, number>((source, subscriber) => {
      source.subscribe(operatorSubscriber<number>(subscriber, { finalize: () => finalized++ }));
    });
    const a = new Subject<number>();
    const seen: unknown[] = [];
    a.pipe(pass).subscribe({ next: (v) => seen.push(v), complete: () => seen.push('done') });
    a.next(7);
    a.complete();
    const b = new Subject<number>();
    const sub = b.pipe(pass).subscribe();
    sub.unsubscribe();
    sub.unsubscribe();
    expect(seen).toEqual([7, 'done']);
    expect(finalized).toBe(2);
    expect(b.observed).toBe(false);
  });
});
