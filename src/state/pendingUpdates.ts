// The `clip_update`s that arrived before their clip: held persistently (O(log n) per event,
// never a whole-collection copy) and bounded, the oldest dropped first.
import type { ClipUpdate } from '../schema/events.js';
import { HashTrie } from '../internal/HashTrie.js';
import { PersistentVector } from '../internal/PersistentVector.js';

/** How many early updates are held at most, unless `createClipsState` is told otherwise. */
export const DEFAULT_MAX_PENDING_UPDATES = 10_000;

/** One held update, linked to the one held before it for the same clip. */
interface Held {
  readonly seq: number;
  readonly update: ClipUpdate;
  /** `seq` of the previous held update of the same clip, or -1. */
  readonly prev: number;
}

/** Per clip: its newest held update and how many of its updates are still held. */
interface Chain {
  readonly newest: number;
  readonly count: number;
}

/**
 * Early updates keyed by `clip_uuid`, each clip's in arrival order. Reads like a
 * `ReadonlyMap` (`size` counts clips, `updateCount` counts updates), iterating clips in the
 * order of their oldest held update.
 *
 * - `add` and `take` cost O(log n) plus the updates taken; no operation copies the whole
 *   collection, and every earlier version stays valid (persistent, like `OrderedMap`).
 * - Bounded: the updates sit in a ring of `capacity` slots in arrival order. An update is
 *   dropped when `capacity` more early updates have arrived after it and its clip still has
 *   not, so at most `capacity` are held and the oldest go first.
 */
export class PendingUpdates implements ReadonlyMap<string, readonly ClipUpdate[]> {
  static empty(capacity: number = DEFAULT_MAX_PENDING_UPDATES): PendingUpdates {
    if (!Number.isInteger(capacity) || capacity < 0) throw new RangeError(`maxPendingUpdates must be a non-negative integer, got ${capacity}`);
    return new PendingUpdates(capacity, PersistentVector.empty(), HashTrie.empty(), 0, 0);
  }

  private constructor(
    /** The most updates held at once. */
    readonly capacity: number,
    /** Slot `seq % capacity` holds early update number `seq` while it is among the newest `capacity`. */
    private readonly ring: PersistentVector<Held>,
    private readonly chains: HashTrie<Chain>,
    /** Early updates ever added (the next one's `seq`). */
    private readonly added: number,
    /** Updates held now. */
    readonly updateCount: number,
  ) {}

  /** Clips with held updates. */
  get size(): number {
    return this.chains.size;
  }

  /** Whether updates are held for the clip `id`. */
  has(id: string): boolean {
    return this.chains.has(id);
  }

  /** The held updates of `id` in arrival order. */
  get(id: string): readonly ClipUpdate[] | undefined {
    const chain = this.chains.get(id);
    return chain === undefined ? undefined : this.walk(chain);
  }

  /**
   * Hold `update`. Returns the new state and whether the oldest held update was dropped to
   * make room (always, when `capacity` is 0: the update itself is not held).
   */
  add(update: ClipUpdate): { readonly pending: PendingUpdates; readonly dropped: boolean } {
    if (this.capacity === 0) return { pending: this, dropped: true };
    const seq = this.added;
    const slot = seq % this.capacity;
    let chains = this.chains;
    let held = this.updateCount;
    let dropped = false;
    if (this.ring.size === this.capacity) {
      // The slot's update leaves the window. Still held iff its clip still has a chain: a
      // clip's chain is deleted when the clip arrives, and is never started again.
      const old = this.ring.get(slot)!.update.clip_uuid;
      const chain = chains.get(old);
      if (chain !== undefined) {
        dropped = true;
        held--;
        chains = chain.count === 1 ? chains.delete(old) : chains.set(old, { newest: chain.newest, count: chain.count - 1 });
      }
    }
    const id = update.clip_uuid;
    const chain = chains.get(id);
    const entry: Held = { seq, update, prev: chain === undefined ? -1 : chain.newest };
    const ring = this.ring.size < this.capacity ? this.ring.push(entry) : this.ring.set(slot, entry);
    chains = chains.set(id, { newest: seq, count: (chain?.count ?? 0) + 1 });
    return { pending: new PendingUpdates(this.capacity, ring, chains, seq + 1, held + 1), dropped };
  }

  /** The held updates of `id` in arrival order, and the state without them. */
  take(id: string): { readonly updates: readonly ClipUpdate[]; readonly pending: PendingUpdates } {
    const chain = this.chains.get(id);
    if (chain === undefined) return { updates: [], pending: this };
    const pending = new PendingUpdates(this.capacity, this.ring, this.chains.delete(id), this.added, this.updateCount - chain.count);
    return { updates: this.walk(chain), pending };
  }

  private walk(chain: Chain): ClipUpdate[] {
    const out = new Array<ClipUpdate>(chain.count);
    let seq = chain.newest;
    for (let i = chain.count - 1; i >= 0; i--) {
      const entry = this.ring.get(seq % this.capacity)!;
      out[i] = entry.update;
      seq = entry.prev;
    }
    return out;
  }

  /** Clips in the order of their oldest held update, with their updates. O(capacity). */
  *entries(): MapIterator<[string, readonly ClipUpdate[]]> {
    const seen = new Set<string>();
    const start = Math.max(0, this.added - this.capacity);
    for (let seq = start; seq < this.added; seq++) {
      const id = this.ring.get(seq % this.capacity)!.update.clip_uuid;
      if (seen.has(id) || !this.chains.has(id)) continue;
      seen.add(id);
      yield [id, this.get(id)!];
    }
  }

  *keys(): MapIterator<string> {
    for (const [id] of this.entries()) yield id;
  }

  *values(): MapIterator<readonly ClipUpdate[]> {
    for (const [, updates] of this.entries()) yield updates;
  }

  /** The held updates per clip, oldest clip first. */
  [Symbol.iterator](): MapIterator<[string, readonly ClipUpdate[]]> {
    return this.entries();
  }

  /** Calls `callback` with each clip's held updates, as `Map.prototype.forEach` does. */
  forEach(callback: (value: readonly ClipUpdate[], key: string, map: ReadonlyMap<string, readonly ClipUpdate[]>) => void, thisArg?: unknown): void {
    for (const [id, updates] of this.entries()) callback.call(thisArg, updates, id, this);
  }

  /** Serialises as a plain object of `clip_uuid` to held updates. */
  toJSON(): Record<string, readonly ClipUpdate[]> {
    return Object.fromEntries(this.entries());
  }
}
