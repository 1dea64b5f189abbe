import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { HashTrie } from '../../src/internal/HashTrie.js';

describe('HashTrie', () => {
  it('behaves like a Map under any sequence of sets and deletes, and every version stays intact', () => {
    const op = fc.oneof(
      fc.record({ kind: fc.constant('set' as const), key: fc.string({ maxLength: 3 }), value: fc.integer() }),
      fc.record({ kind: fc.constant('delete' as const), key: fc.string({ maxLength: 3 }) }),
    );
    fc.assert(
      fc.property(fc.array(op, { maxLength: 300 }), (ops) => {
        let trie = HashTrie.empty<number>();
        const model = new Map<string, number>();
        const versions: Array<[HashTrie<number>, Map<string, number>]> = [];
        for (const o of ops) {
          if (o.kind === 'set') {
            trie = trie.set(o.key, o.value);
            model.set(o.key, o.value);
          } else {
            trie = trie.delete(o.key);
            model.delete(o.key);
          }
          versions.push([trie, new Map(model)]);
        }
        for (const [t, m] of versions) {
          expect(t.size).toBe(m.size);
          for (const [k, v] of m) expect(t.get(k)).toBe(v);
          for (const o of ops) if (!m.has(o.key)) expect(t.has(o.key)).toBe(false);
        }
      }),
      { numRuns: 200 },
    );
  });

  it('holds 100k keys, deletes them all, and returns itself for no-op changes', () => {
    let trie = HashTrie.empty<number>();
    for (let i = 0; i < 100_000; i++) trie = trie.set(`clip-${i}`, i);
    expect(trie.size).toBe(100_000);
    expect(trie.get('clip-4242')).toBe(4242);
    expect(trie.set('clip-7', 7)).toBe(trie);
    expect(trie.delete('nope')).toBe(trie);
    const full = trie;
    for (let i = 0; i < 100_000; i += 2) trie = trie.delete(`clip-${i}`);
    expect(trie.size).toBe(50_000);
    expect(trie.get('clip-4242')).toBeUndefined();
    expect(trie.get('clip-4243')).toBe(4243);
    expect(full.get('clip-4242')).toBe(4242);
    for (let i = 1; i < 100_000; i += 2) trie = trie.delete(`clip-${i}`);
    expect(trie.size).toBe(0);
  });

  it('keeps keys whose 32-bit hashes collide apart (FNV-1a: k32728 and k261234 collide)', () => {
    const colliding = ['k32728', 'k261234'];
    let trie = HashTrie.empty<string>();
    for (const k of ['a', ...colliding, 'b']) trie = trie.set(k, k.toUpperCase());
    expect(trie.size).toBe(4);
    for (const k of ['a', ...colliding, 'b']) expect(trie.get(k)).toBe(k.toUpperCase());
    const replaced = trie.set('k261234', 'new');
    expect(replaced.get('k261234')).toBe('new');
    expect(replaced.get('k32728')).toBe('K32728');
    expect(trie.get('k261234')).toBe('K261234');
    const one = replaced.delete('k32728');
    expect(one.size).toBe(3);
    expect(one.get('k32728')).toBeUndefined();
    expect(one.get('k261234')).toBe('new');
    // Another key with the same hash joins the leaf left behind.
    const again = one.set('k32728', 'back');
    expect(again.get('k32728')).toBe('back');
    expect(again.get('k261234')).toBe('new');
    expect(again.delete('k261234').delete('k32728').delete('a').delete('b').size).toBe(0);
  });
});
