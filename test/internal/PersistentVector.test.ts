import { describe, expect, it } from 'vitest';
import { PersistentVector } from '../../src/internal/PersistentVector.js';

describe('PersistentVector', () => {
  // Sizes that cross the tail, the first trie level, and a root overflow (32, 1056, 33824).
  const N = 40_000;

  it('push then get returns every element, across every trie depth', () => {
    let v = PersistentVector.empty<number>();
    for (let i = 0; i < N; i++) v = v.push(i);
    expect(v.size).toBe(N);
    for (let i = 0; i < N; i++) if (v.get(i) !== i) throw new Error(`get(${i}) = ${v.get(i)}`);
    expect(v.get(-1)).toBeUndefined();
    expect(v.get(N)).toBeUndefined();
    expect(v.toArray()).toEqual(Array.from({ length: N }, (_, i) => i));
    expect([...v]).toEqual(v.toArray());
  });

  it('keeps every older version intact when pushing and setting', () => {
    const versions: PersistentVector<number>[] = [];
    let v = PersistentVector.empty<number>();
    for (let i = 0; i < 2_000; i++) {
      v = v.push(i);
      if (i % 97 === 0) versions.push(v);
    }
    const model = v.toArray();
    let w = v;
    for (let i = 0; i < 2_000; i += 7) {
      w = w.set(i, -i - 1);
      model[i] = -i - 1;
    }
    expect(w.toArray()).toEqual(model);
    expect(v.toArray()).toEqual(Array.from({ length: 2_000 }, (_, i) => i));
    for (const old of versions) expect(old.toArray()).toEqual(Array.from({ length: old.size }, (_, i) => i));
  });

  it('set returns the same vector for the same value and refuses an index out of range', () => {
    const v = PersistentVector.empty<string>().push('a').push('b');
    expect(v.set(1, 'b')).toBe(v);
    expect(() => v.set(2, 'c')).toThrow(RangeError);
  });
});
