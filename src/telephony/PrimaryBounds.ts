// What the primary of `callWorkers` holds for its workers: each shared bound (legs,
// connections) with the places every worker took, and the session slots with their FIFO of
// waiters. No processes here: a worker is a `Peer` that can be sent a message, so the rules
// are stepped in a test without forking.
import type { PrimaryMessage, SharedBound } from './callWorker.js';

/** A worker as the ledger sees it (node:cluster's `Worker` is one). */
export interface Peer {
  /** Whether a message can still reach it. */
  isConnected(): boolean;
  /** Send it a message. */
  send(message: PrimaryMessage): unknown;
}

/** One bound the workers share: how many places are taken, by whom. */
interface Bound {
  taken: number;
  limit: number;
  full: boolean;
  readonly byWorker: Map<number, number>;
}

export class PrimaryBounds {
  private readonly bounds = new Map<SharedBound, Bound>();
  /** Session slots: held per worker (by `index:id`), and the FIFO of those waiting. */
  private sessionLimit = Infinity;
  private sessionsHeld = 0;
  private readonly sessionHolders = new Map<string, number>();
  private readonly sessionQueue: Array<{ key: string; index: number; peer: Peer; id: number }> = [];
  /** Whether the workers refuse a call that finds no slot (`whenFull: 'reject'`): the last request said. */
  private refusing = false;

  /** `broadcast` tells every worker when a bound becomes full or has room again. */
  constructor(private readonly broadcast: (message: PrimaryMessage) => void) {}

  private bound(b: SharedBound): Bound {
    let x = this.bounds.get(b);
    if (!x) this.bounds.set(b, (x = { taken: 0, limit: Infinity, full: false, byWorker: new Map() }));
    return x;
  }

  private checkRoom(b: SharedBound, x: Bound): void {
    const full = x.taken >= x.limit;
    if (full !== x.full) {
      x.full = full;
      this.broadcast({ t: 'svcw:room', bound: b, full });
    }
  }

  /** Worker `index` asks for a place under `limit` (the worker's option: the last asked wins). */
  take(index: number, peer: Peer, b: SharedBound, limit: number, id: number): void {
    const x = this.bound(b);
    x.limit = limit;
    const ok = x.taken < x.limit;
    if (ok) {
      x.taken++;
      x.byWorker.set(index, (x.byWorker.get(index) ?? 0) + 1);
    }
    peer.send({ t: 'svcw:took', id, ok });
    this.checkRoom(b, x);
  }

  /** Worker `index` gives a place back (one it does not hold is ignored). */
  give(index: number, b: SharedBound): void {
    const x = this.bound(b);
    const mine = x.byWorker.get(index) ?? 0;
    if (mine === 0) return;
    x.byWorker.set(index, mine - 1);
    x.taken--;
    this.checkRoom(b, x);
  }

  /** Worker `index` asks for session slot `id`: granted now, refused (`wait` false), or queued in order. */
  acquire(index: number, peer: Peer, id: number, limit: number, wait: boolean): void {
    this.sessionLimit = limit;
    this.refusing = !wait;
    const key = `${index}:${id}`;
    if (this.sessionsHeld < this.sessionLimit && this.sessionQueue.length === 0) {
      this.sessionsHeld++;
      this.sessionHolders.set(key, index);
      peer.send({ t: 'svcw:granted', id, ok: true });
    } else if (!wait) peer.send({ t: 'svcw:granted', id, ok: false });
    else this.sessionQueue.push({ key, index, peer, id });
  }

  /** Worker `index` no longer wants slot `id`: out of the queue, or given back if it was granted meanwhile. */
  withdraw(index: number, id: number): void {
    const key = `${index}:${id}`;
    const i = this.sessionQueue.findIndex((q) => q.key === key);
    if (i >= 0) this.sessionQueue.splice(i, 1);
    else this.release(index, id);
  }

  /** Worker `index` gives slot `id` back: the next waiter gets it. */
  release(index: number, id: number): void {
    if (!this.sessionHolders.delete(`${index}:${id}`)) return;
    this.sessionsHeld--;
    this.grantSessions();
  }

  private grantSessions(): void {
    while (this.sessionsHeld < this.sessionLimit && this.sessionQueue.length > 0) {
      const next = this.sessionQueue.shift()!;
      if (!next.peer.isConnected()) continue;
      this.sessionsHeld++;
      this.sessionHolders.set(next.key, next.index);
      next.peer.send({ t: 'svcw:granted', id: next.id, ok: true });
    }
  }

  /** Worker `index` is gone: every place and slot it held is free, its waits are dropped. */
  workerGone(index: number): void {
    for (const [b, x] of this.bounds) {
      x.taken -= x.byWorker.get(index) ?? 0;
      x.byWorker.delete(index);
      this.checkRoom(b, x);
    }
    for (let i = this.sessionQueue.length - 1; i >= 0; i--) if (this.sessionQueue[i]!.index === index) this.sessionQueue.splice(i, 1);
    for (const [key, holder] of [...this.sessionHolders]) {
      if (holder !== index) continue;
      this.sessionHolders.delete(key);
      this.sessionsHeld--;
    }
    this.grantSessions();
  }

  /** Why a new call would be refused now (every session slot held, and the workers refuse rather than queue), or undefined. */
  get unready(): string | undefined {
    return this.refusing && this.sessionsHeld >= this.sessionLimit ? `every one of ${this.sessionLimit} sessions runs (whenFull: 'reject')` : undefined;
  }

  /** What a worker that comes up must be told: the bounds full now. */
  fullNow(): PrimaryMessage[] {
    return [...this.bounds].filter(([, x]) => x.full).map(([bound]) => ({ t: 'svcw:room', bound, full: true }));
  }
}
