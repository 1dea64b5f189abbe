import { Observable } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { localSlots } from '../../src/telephony/callSlots.js';

/** Work that runs until `end()`: it says when it starts. */
function work(log: string[], name: string): { work$: Observable<string>; end(): void } {
  let finish: (() => void) | undefined;
  return {
    work$: new Observable<string>((s) => {
      log.push(`start ${name}`);
      finish = () => s.complete();
    }),
    end: () => finish?.(),
  };
}

describe('localSlots: the sessions of one analyzeCalls subscription', () => {
  it('grants a free slot in the very tick the work subscribes, queues the rest first come first served, and is full at the bound (beyond 25: a bound of its own)', async () => {
    const slots = localSlots(2);
    const log: string[] = [];
    const [a, b, c, d] = ['a', 'b', 'c', 'd'].map((n) => work(log, n));
    slots.run(a!.work$).subscribe();
    expect(log).toEqual(['start a']);
    expect(slots.full()).toBe(false);
    slots.run(b!.work$).subscribe();
    slots.run(c!.work$).subscribe();
    const waitingD = slots.run(d!.work$).subscribe();
    expect(log).toEqual(['start a', 'start b']);
    expect(slots.full()).toBe(true);
    // Withdrawn while waiting: d never starts.
    waitingD.unsubscribe();
    a!.end();
    await Promise.resolve();
    expect(log).toEqual(['start a', 'start b', 'start c']);
    expect(() => localSlots(1000)).not.toThrow();
  });
});
