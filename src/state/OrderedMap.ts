// The persistent keyed collection every derived stream emits: insertion-ordered, immutable,
// and cheap to "change" (O(log n) per set), so a fold over n events stays O(n log32 n).
import { copiedSlots, PersistentVector } from '../internal/PersistentVector.js';

/** The unchecked append of {@link OrderedMap} (for src/state only; not exported by the package). */
export const appendAbsent: unique symbol = Symbol('OrderedMap.appendAbsent');

/**
 * Key order and key-to-slot index, shared by one lineage of maps and only ever appended to.
 * A map owns the prefix `keys[0 .. map.size)`; the index tells the slot of a key, and the
 * key belongs to a map only when that slot is inside the map's prefix.
 */
interface Backing {
  readonly keys: string[];
  readonly index: Map<string, number>;
}

/**
 * An immutable, insertion-ordered map from string keys to values.
 *
 * - Iteration, `toArray()` and `at()` follow the order in which keys were FIRST set;
 *   setting an existing key replaces its value in place, it does not move it.
 * - `set` returns a new map (or the same map when the value is identical) and never
 *   disturbs the map it was called on: every version stays valid.
 * - `get`, `has`, `at`, `set` cost O(log32 n); `toArray()` costs O(n) once per map and is
 *   memoised, the result frozen.
 *
 * Why not `new Map(old)` per change: that is O(n) per event, O(n²) per session. The values
 * live in a persistent vector (path copying); the key order and key index are shared
 * between a map and its successors, which is safe because they are append-only and each
 * map reads only its own prefix. Appending from a map that is not the newest of its
 * lineage (a branch, never the case inside a fold) first copies its prefix.
 */
export class OrderedMap<V> implements Iterable<V> {
  private static readonly EMPTY = new OrderedMap<never>(null, PersistentVector.empty());

  /** The empty map. */
  static empty<V>(): OrderedMap<V> {
    return OrderedMap.EMPTY as OrderedMap<V>;
  }

  /** A map of `entries` in order; a later duplicate key replaces the earlier value. */
  static of<V>(entries: Iterable<readonly [string, V]>): OrderedMap<V> {
    let map = OrderedMap.empty<V>();
    for (const [k, v] of entries) map = map.set(k, v);
    return map;
  }

  private array: readonly V[] | undefined;

  private constructor(
    private readonly backing: Backing | null,
    private readonly values: PersistentVector<V>,
  ) {}

  get size(): number {
    return this.values.size;
  }

  /** The slot of `key`, or -1. */
  indexOf(key: string): number {
    const backing = this.backing;
    if (backing === null) return -1;
    // The newest key first: a clip's partials, then its final clip, arrive one after another
    // for the key just added, and this compare saves a lookup in an index of a million keys
    // (a likely cache miss) for each of them.
    const last = this.values.size - 1;
    if (backing.keys[last] === key) return last;
    const i = backing.index.get(key);
    return i !== undefined && i <= last ? i : -1;
  }

  /** Whether `key` is in this map. */
  has(key: string): boolean {
    return this.indexOf(key) >= 0;
  }

  /** The value of `key`, or undefined when absent. */
  get(key: string): V | undefined {
    const i = this.indexOf(key);
    return i < 0 ? undefined : this.values.get(i);
  }

  /** The value at position `index` in insertion order. */
  at(index: number): V | undefined {
    return this.values.get(index);
  }

  /** The key at position `index` in insertion order. */
  keyAt(index: number): string | undefined {
    return index >= 0 && index < this.values.size ? this.backing?.keys[index] : undefined;
  }

  /**
   * A map with `key` set to `value`; this map is left unchanged. A new key goes last; an
   * existing key keeps its position. Returns this same map when the value is identical.
   */
  set(key: string, value: V): OrderedMap<V> {
    const i = this.indexOf(key);
    if (i >= 0) return this.setAt(i, value);
    return this[appendAbsent](key, value);
  }

  /**
   * A map with `key`, which must not be in this map, added last with `value`; this map is left
   * unchanged. Saves the key lookup when the caller has just made it (`indexOf` gave -1).
   * Unchecked (a present key would corrupt the index), so it is keyed by a symbol the package
   * does not export: the reducers can call it, users call {@link OrderedMap.set}.
   */
  [appendAbsent](key: string, value: V): OrderedMap<V> {
    let backing = this.backing;
    const size = this.values.size;
    if (backing === null || backing.keys.length !== size) {
      // First key, or a branch off an older version: start a backing of our own.
      const keys = backing ? backing.keys.slice(0, size) : [];
      copiedSlots.count += keys.length;
      backing = { keys, index: new Map(keys.map((k, n) => [k, n])) };
    }
    backing.keys.push(key);
    backing.index.set(key, size);
    return new OrderedMap(backing, this.values.push(value));
  }

  /**
   * A map with the key at position `index` (which must be in range) holding `value`; `this`
   * when it already does. Saves the key lookup when the caller has just made it (`indexOf`).
   */
  setAt(index: number, value: V): OrderedMap<V> {
    const values = this.values.set(index, value);
    return values === this.values ? this : new OrderedMap(this.backing, values);
  }

  /** Iterate the values in insertion order. */
  [Symbol.iterator](): Iterator<V> {
    return this.values[Symbol.iterator]();
  }

  /** Iterate the keys in insertion order. */
  *keys(): IterableIterator<string> {
    for (let i = 0; i < this.values.size; i++) yield this.backing!.keys[i]!;
  }

  /** Iterate `[key, value]` pairs in insertion order. */
  *entries(): IterableIterator<[string, V]> {
    let i = 0;
    for (const v of this.values) yield [this.backing!.keys[i++]!, v];
  }

  /** Every value in insertion order, as a frozen array (built once per map). */
  toArray(): readonly V[] {
    this.array ??= Object.freeze(this.values.toArray());
    return this.array;
  }

  /** Serialises as the array of values. */
  toJSON(): readonly V[] {
    return this.toArray();
  }
}
