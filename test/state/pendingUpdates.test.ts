import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { ClipUpdate } from 'svc-stream';
import { PendingUpdates } from '../../src/state/pendingUpdates.js';

const up = (id: string, n: number): ClipUpdate => ({ clip_uuid: id, accent: `a${n}` });

/** The naive reference: a list in arrival order, cut to the newest `capacity` early updates. */
class Model {
  held: Array<{ seq: number; update: ClipUpdate }> = [];
  added = 0;
  dropped = 0;
  constructor(readonly capacity: number) {}
  add(update: ClipUpdate) {
    const seq = this.added++;
    this.held.push({ seq, update });
    const before = this.held.length;
    this.held = this.held.filter((h) => h.seq >= this.added - this.capacity);
    this.dropped += before - this.held.length;
  }
  take(id: string) {
    const out = this.held.filter((h) => h.update.clip_uuid === id).map((h) => h.update);
    this.held = this.held.filter((h) => h.update.clip_uuid !== id);
    return out;
  }
  get ids() {
    return [...new Set(this.held.map((h) => h.update.clip_uuid))];
  }
}

describe('PendingUpdates', () => {
  it('matches the naive list for any adds and takes, bounded, the oldest dropped first', () => {
    const op = fc.oneof(
      { arbitrary: fc.record({ kind: fc.constant('add' as const), id: fc.constantFrom('a', 'b', 'c', 'd', 'e') }), weight: 3 },
      { arbitrary: fc.record({ kind: fc.constant('take' as const), id: fc.constantFrom('a', 'b', 'c', 'd', 'e', 'f') }), weight: 1 },
    );
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 6 }), fc.array(op, { maxLength: 80 }), (capacity, ops) => {
        let pending = PendingUpdates.empty(capacity);
        const model = new Model(capacity);
        const taken = new Set<string>();
        let dropped = 0;
        ops.forEach((o, n) => {
          // A clip's updates are never held again once it arrived (they apply directly).
          if (taken.has(o.id)) return;
          if (o.kind === 'add') {
            const r = pending.add(up(o.id, n));
            if (r.dropped) dropped++;
            pending = r.pending;
            model.add(up(o.id, n));
          } else {
            taken.add(o.id);
            const r = pending.take(o.id);
            expect(r.updates).toEqual(model.take(o.id));
            pending = r.pending;
          }
          expect(dropped).toBe(model.dropped);
          expect(pending.updateCount).toBe(model.held.length);
          expect(pending.updateCount).toBeLessThanOrEqual(capacity);
          expect([...pending.keys()]).toEqual(model.ids);
          expect(pending.size).toBe(model.ids.length);
          for (const id of model.ids) expect(pending.get(id)).toEqual(model.held.filter((h) => h.update.clip_uuid === id).map((h) => h.update));
        });
      }),
      { numRuns: 300 },
    );
  });

  it('keeps every earlier version intact', () => {
    const v0 = PendingUpdates.empty(2);
    const v1 = v0.add(up('a', 1)).pending;
    const v2 = v1.add(up('b', 2)).pending;
    const v3 = v2.add(up('c', 3));
    expect(v3.dropped).toBe(true);
    expect(Object.keys(v3.pending.toJSON())).toEqual(['b', 'c']);
    expect(v2.toJSON()).toEqual({ a: [up('a', 1)], b: [up('b', 2)] });
    expect(v1.get('a')).toEqual([up('a', 1)]);
    expect(v0.size).toBe(0);
    expect(v2.take('a').pending.get('a')).toBeUndefined();
    expect(v2.get('a')).toEqual([up('a', 1)]);
  });

  it('rejects a capacity that is not a non-negative integer', () => {
    expect(() => PendingUpdates.empty(-1)).toThrow(RangeError);
    expect(() => PendingUpdates.empty(1.5)).toThrow(RangeError);
  });
});
