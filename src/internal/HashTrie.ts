// A persistent hash map (hash array mapped trie, after Bagwell and Clojure's
// PersistentHashMap): set and delete copy only the path they touch, every version stays valid.
import { copiedSlots } from './PersistentVector.js';

const BITS = 5;
const MASK = (1 << BITS) - 1;

class Leaf<V> {
  constructor(readonly hash: number, readonly key: string, readonly value: V) {}
}

/** Keys whose 32-bit hashes are equal; rare, so a small array scanned linearly. */
class Collision<V> {
  constructor(readonly hash: number, readonly entries: ReadonlyArray<Leaf<V>>) {}
}

/** Up to 32 children, present where the bitmap has a bit, stored densely. */
class Branch<V> {
  constructor(readonly bitmap: number, readonly children: ReadonlyArray<Node<V>>) {}
}

type Node<V> = Leaf<V> | Collision<V> | Branch<V>;

/**
 * Immutable map from string keys to values. `get`, `set` and `delete` cost O(log32 n) (a
 * few copies of at most 32 slots) and never copy the whole map. Iteration order is
 * unspecified; callers that need an order keep it themselves.
 */
export class HashTrie<V> {
  private static readonly EMPTY = new HashTrie<never>(0, undefined);

  static empty<V>(): HashTrie<V> {
    return HashTrie.EMPTY as HashTrie<V>;
  }

  private constructor(
    readonly size: number,
    private readonly root: Node<V> | undefined,
  ) {}

  get(key: string): V | undefined {
    const hash = hashString(key);
    let node = this.root;
    for (let shift = 0; node !== undefined; shift += BITS) {
      if (node instanceof Leaf) return node.key === key ? node.value : undefined;
      if (node instanceof Collision) return node.entries.find((e) => e.key === key)?.value;
      const bit = 1 << ((hash >>> shift) & MASK);
      if ((node.bitmap & bit) === 0) return undefined;
      node = node.children[popcount(node.bitmap & (bit - 1))];
    }
    return undefined;
  }

  has(key: string): boolean {
    return this.get(key) !== undefined;
  }

  /** A map with `key` holding `value`; `this` when it already does. */
  set(key: string, value: V): HashTrie<V> {
    const hash = hashString(key);
    const added = { yes: false };
    const root = this.root === undefined ? new Leaf(hash, key, value) : setIn(this.root, 0, hash, key, value, added);
    if (this.root === undefined) added.yes = true;
    return root === this.root ? this : new HashTrie(this.size + (added.yes ? 1 : 0), root);
  }

  /** A map without `key`; `this` when it has no such key. */
  delete(key: string): HashTrie<V> {
    if (this.root === undefined) return this;
    const root = deleteIn(this.root, 0, hashString(key), key);
    return root === this.root ? this : new HashTrie(this.size - 1, root);
  }
}

function setIn<V>(node: Node<V>, shift: number, hash: number, key: string, value: V, added: { yes: boolean }): Node<V> {
  if (node instanceof Leaf) {
    if (node.key === key) return node.value === value ? node : new Leaf(hash, key, value);
    added.yes = true;
    const leaf = new Leaf(hash, key, value);
    return node.hash === hash ? new Collision(hash, [node, leaf]) : merge(node, leaf, shift);
  }
  if (node instanceof Collision) {
    const leaf = new Leaf(hash, key, value);
    if (node.hash !== hash) {
      added.yes = true;
      return merge(node, leaf, shift);
    }
    const i = node.entries.findIndex((e) => e.key === key);
    if (i >= 0 && node.entries[i]!.value === value) return node;
    const entries = node.entries.slice();
    copiedSlots.count += entries.length;
    if (i >= 0) entries[i] = leaf;
    else {
      added.yes = true;
      entries.push(leaf);
    }
    return new Collision(hash, entries);
  }
  const bit = 1 << ((hash >>> shift) & MASK);
  const at = popcount(node.bitmap & (bit - 1));
  if ((node.bitmap & bit) === 0) {
    added.yes = true;
    const children = node.children.slice();
    children.splice(at, 0, new Leaf(hash, key, value));
    copiedSlots.count += children.length;
    return new Branch(node.bitmap | bit, children);
  }
  const child = node.children[at]!;
  const next = setIn(child, shift + BITS, hash, key, value, added);
  if (next === child) return node;
  const children = node.children.slice();
  copiedSlots.count += children.length;
  children[at] = next;
  return new Branch(node.bitmap, children);
}

/** A branch holding two nodes whose hashes differ (so they part by bit 31 at the latest). */
function merge<V>(a: Leaf<V> | Collision<V>, b: Leaf<V>, shift: number): Branch<V> {
  const ai = (a.hash >>> shift) & MASK;
  const bi = (b.hash >>> shift) & MASK;
  if (ai === bi) return new Branch(1 << ai, [merge(a, b, shift + BITS)]);
  return new Branch((1 << ai) | (1 << bi), ai < bi ? [a, b] : [b, a]);
}

function deleteIn<V>(node: Node<V>, shift: number, hash: number, key: string): Node<V> | undefined {
  if (node instanceof Leaf) return node.key === key ? undefined : node;
  if (node instanceof Collision) {
    const i = node.entries.findIndex((e) => e.key === key);
    if (i < 0) return node;
    const entries = node.entries.filter((_, n) => n !== i);
    copiedSlots.count += entries.length;
    return entries.length === 1 ? entries[0]! : new Collision(node.hash, entries);
  }
  const bit = 1 << ((hash >>> shift) & MASK);
  if ((node.bitmap & bit) === 0) return node;
  const at = popcount(node.bitmap & (bit - 1));
  const child = node.children[at]!;
  const next = deleteIn(child, shift + BITS, hash, key);
  if (next === child) return node;
  const children = node.children.slice();
  copiedSlots.count += children.length;
  if (next === undefined) {
    children.splice(at, 1);
    if (children.length === 0) return undefined;
    // A lone leaf moves up: lookups compare the key at a leaf, whatever its depth.
    if (children.length === 1 && !(children[0] instanceof Branch)) return children[0];
    return new Branch(node.bitmap & ~bit, children);
  }
  if (children.length === 1 && !(next instanceof Branch)) return next;
  children[at] = next;
  return new Branch(node.bitmap, children);
}

/** 32-bit FNV-1a. */
function hashString(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193);
  return h >>> 0;
}

function popcount(x: number): number {
  x -= (x >>> 1) & 0x55555555;
  x = (x & 0x33333333) + ((x >>> 2) & 0x33333333);
  return Math.imul((x + (x >>> 4)) & 0x0f0f0f0f, 0x01010101) >>> 24;
}
