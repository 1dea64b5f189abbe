// A persistent vector (32-way trie with a tail, after Clojure's PersistentVector): push and
// set copy only the path they touch, so every older version stays valid and readable.

const BITS = 5;
const WIDTH = 1 << BITS;
const MASK = WIDTH - 1;

type Trie = unknown[];

/**
 * Slots copied by the persistent structures (path copying), summed since start. A
 * structural cost measure for tests: it grows by O(log n) per change, never by O(n).
 */
export const copiedSlots = { count: 0 };

const EMPTY_ROOT: Trie = [];

/**
 * Immutable indexed sequence. `push` and `set` cost O(log32 n) (at most a few 32-slot
 * copies), reads cost the same, and no operation ever copies the whole sequence.
 */
export class PersistentVector<T> {
  static empty<T>(): PersistentVector<T> {
    return new PersistentVector<T>(0, BITS, EMPTY_ROOT, []);
  }

  private constructor(
    readonly size: number,
    private readonly shift: number,
    private readonly root: Trie,
    private readonly tail: readonly T[],
  ) {}

  private tailOffset(): number {
    return this.size < WIDTH ? 0 : ((this.size - 1) >>> BITS) << BITS;
  }

  /** The 32-slot leaf that holds `index` (which must be in range). */
  private leafFor(index: number): readonly T[] {
    if (index >= this.tailOffset()) return this.tail;
    let node = this.root;
    for (let level = this.shift; level > 0; level -= BITS) node = node[(index >>> level) & MASK] as Trie;
    return node as T[];
  }

  get(index: number): T | undefined {
    if (index < 0 || index >= this.size) return undefined;
    return this.leafFor(index)[index & MASK];
  }

  push(value: T): PersistentVector<T> {
    if (this.size - this.tailOffset() < WIDTH) {
      const tail = this.tail.slice();
      copiedSlots.count += tail.length;
      tail.push(value);
      return new PersistentVector(this.size + 1, this.shift, this.root, tail);
    }
    // The tail is full: it moves into the trie and a new tail starts.
    const tailNode = this.tail as unknown[];
    if (this.size >>> BITS > 1 << this.shift) {
      const root = [this.root, newPath(this.shift, tailNode)];
      return new PersistentVector(this.size + 1, this.shift + BITS, root, [value]);
    }
    const root = this.pushTail(this.shift, this.root, tailNode);
    return new PersistentVector(this.size + 1, this.shift, root, [value]);
  }

  private pushTail(level: number, parent: Trie, tailNode: Trie): Trie {
    const copy = parent.slice();
    copiedSlots.count += copy.length;
    const sub = ((this.size - 1) >>> level) & MASK;
    if (level === BITS) {
      copy[sub] = tailNode;
    } else {
      const child = parent[sub] as Trie | undefined;
      copy[sub] = child ? this.pushTail(level - BITS, child, tailNode) : newPath(level - BITS, tailNode);
    }
    return copy;
  }

  /** A vector with `index` (in range) holding `value`; `this` when it already does. */
  set(index: number, value: T): PersistentVector<T> {
    if (index < 0 || index >= this.size) throw new RangeError(`index ${index} out of range 0..${this.size - 1}`);
    if (index >= this.tailOffset()) {
      if (this.tail[index & MASK] === value) return this;
      const tail = this.tail.slice();
      copiedSlots.count += tail.length;
      tail[index & MASK] = value;
      return new PersistentVector(this.size, this.shift, this.root, tail);
    }
    const root = assoc(this.shift, this.root, index, value);
    return root === this.root ? this : new PersistentVector(this.size, this.shift, root, this.tail);
  }

  *[Symbol.iterator](): IterableIterator<T> {
    for (let base = 0; base < this.size; base += WIDTH) {
      const leaf = this.leafFor(base);
      const end = Math.min(WIDTH, this.size - base);
      for (let i = 0; i < end; i++) yield leaf[i] as T;
    }
  }

  /** A fresh array of every element, O(n). */
  toArray(): T[] {
    const out = new Array<T>(this.size);
    for (let base = 0; base < this.size; base += WIDTH) {
      const leaf = this.leafFor(base);
      const end = Math.min(WIDTH, this.size - base);
      for (let i = 0; i < end; i++) out[base + i] = leaf[i] as T;
    }
    return out;
  }
}

function newPath(level: number, node: Trie): Trie {
  return level === 0 ? node : [newPath(level - BITS, node)];
}

/**
 * `node` with `index` holding `value`, path-copied; `node` itself when the slot already holds
 * `value` (found on the way down, so a no-op costs one walk and no copy).
 */
function assoc(level: number, node: Trie, index: number, value: unknown): Trie {
  if (level === 0) {
    const at = index & MASK;
    if (node[at] === value) return node;
    const copy = node.slice();
    copiedSlots.count += copy.length;
    copy[at] = value;
    return copy;
  }
  const sub = (index >>> level) & MASK;
  const child = node[sub] as Trie;
  const next = assoc(level - BITS, child, index, value);
  if (next === child) return node;
  const copy = node.slice();
  copiedSlots.count += copy.length;
  copy[sub] = next;
  return copy;
}
