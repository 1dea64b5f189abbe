import { describe, expect, it } from 'vitest';
import { OrderedMap } from '../../src/state/OrderedMap.js';

describe('OrderedMap', () => {
  it('keeps insertion order; setting an existing key replaces the value in place', () => {
    const m = OrderedMap.empty<number>().set('b', 1).set('a', 2).set('b', 3);
    expect(m.size).toBe(2);
    expect(m.toArray()).toEqual([3, 2]);
    expect([...m.keys()]).toEqual(['b', 'a']);
    expect([...m.entries()]).toEqual([['b', 3], ['a', 2]]);
    expect(m.get('a')).toBe(2);
    expect(m.has('c')).toBe(false);
    expect(m.indexOf('a')).toBe(1);
    expect(m.at(0)).toBe(3);
    expect(m.keyAt(1)).toBe('a');
    expect(m.keyAt(2)).toBeUndefined();
    expect(JSON.stringify(m)).toBe('[3,2]');
  });

  it('returns the same map when the value is identical', () => {
    const m = OrderedMap.empty<number>().set('a', 1);
    expect(m.set('a', 1)).toBe(m);
  });

  it('never changes a version it was called on', () => {
    const m1 = OrderedMap.empty<string>().set('a', 'A');
    const m2 = m1.set('b', 'B');
    const m3 = m2.set('a', 'A2');
    expect(m1.toArray()).toEqual(['A']);
    expect(m1.has('b')).toBe(false);
    expect(m1.get('b')).toBeUndefined();
    expect(m2.toArray()).toEqual(['A', 'B']);
    expect(m3.toArray()).toEqual(['A2', 'B']);
  });

  it('branches from an older version without disturbing the newer one', () => {
    const base = OrderedMap.empty<number>().set('a', 1);
    const left = base.set('x', 2);
    const right = base.set('y', 3).set('x', 4);
    expect(left.toArray()).toEqual([1, 2]);
    expect([...left.keys()]).toEqual(['a', 'x']);
    expect(left.has('y')).toBe(false);
    expect(right.toArray()).toEqual([1, 3, 4]);
    expect([...right.keys()]).toEqual(['a', 'y', 'x']);
    // The original lineage can still grow after the branch.
    const left2 = left.set('z', 5);
    expect([...left2.keys()]).toEqual(['a', 'x', 'z']);
    expect(right.has('z')).toBe(false);
  });

  it('two maps grown from the shared empty map are independent', () => {
    const a = OrderedMap.empty<number>().set('k', 1);
    const b = OrderedMap.empty<number>().set('j', 2);
    expect(a.has('j')).toBe(false);
    expect(b.has('k')).toBe(false);
    expect(OrderedMap.empty<number>().size).toBe(0);
  });

  it('toArray is frozen and built once per map', () => {
    const m = OrderedMap.of([['a', 1], ['b', 2], ['a', 3]]);
    const arr = m.toArray();
    expect(arr).toEqual([3, 2]);
    expect(Object.isFrozen(arr)).toBe(true);
    expect(m.toArray()).toBe(arr);
  });

  it('agrees with a Map model over many random sets, and old versions stay as they were', () => {
    let seed = 42;
    const rand = (n: number) => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) % n);
    let m = OrderedMap.empty<number>();
    const model = new Map<string, number>();
    const checkpoints: Array<[OrderedMap<number>, Array<[string, number]>]> = [];
    for (let i = 0; i < 20_000; i++) {
      const key = `k${rand(3_000)}`;
      m = m.set(key, i);
      model.set(key, i);
      if (i % 1_000 === 0) checkpoints.push([m, [...model.entries()]]);
    }
    expect([...m.entries()]).toEqual([...model.entries()]);
    for (const [old, entries] of checkpoints) expect([...old.entries()]).toEqual(entries);
  });
});
