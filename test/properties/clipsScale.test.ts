// Early clip updates stay O(log n) per event under adversarial orderings: measured
// structurally (slots copied by the persistent structures plus every Map entry written,
// which catches a whole-Map copy), never by wall time.
import fc from 'fast-check';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { clipsReducer, createClipsState } from 'svc-stream/state';
import { type ServerEvent } from 'svc-stream';
import { copiedSlots } from '../../src/internal/PersistentVector.js';

type Mode = 'updatesFirst' | 'neverArrive' | 'oneClipMany' | 'shuffled';

/** A deterministic adversarial session of about `size` events. */
function session(mode: Mode, size: number, seed: number): ServerEvent[] {
  let s = seed >>> 0 || 1;
  const rand = (n: number) => ((s = (Math.imul(s, 1103515245) + 12345) >>> 0) >>> 8) % n;
  const clip = (id: string): ServerEvent => ({ type: 'clip', clip: { clip_uuid: id, text: id } }) as ServerEvent;
  const update = (id: string, n: number): ServerEvent => ({ type: 'clip_update', clip_update: { clip_uuid: id, accent: `a${n}` } }) as ServerEvent;
  const out: ServerEvent[] = [];
  switch (mode) {
    case 'updatesFirst': {
      // Every clip's updates before any clip; the clips then arrive newest first.
      const clips = Math.floor(size / 3);
      for (let i = 0; i < clips; i++) out.push(update(`c${i}`, i), update(`c${i}`, -i));
      for (let i = clips - 1; i >= 0; i--) out.push(clip(`c${i}`));
      break;
    }
    case 'neverArrive':
      // Updates for clips that never come, past any bound, among ordinary clips.
      for (let i = 0; out.length < size; i++) out.push(update(`ghost${i}`, i), clip(`c${i}`), update(`c${rand(i + 1)}`, i));
      break;
    case 'oneClipMany':
      for (let i = 0; i < size - 1; i++) out.push(update('one', i));
      out.push(clip('one'));
      break;
    case 'shuffled': {
      for (let i = 0; out.length < size; i++) out.push(clip(`c${i}`), update(`c${i}`, i));
      for (let i = out.length - 1; i > 0; i--) {
        const j = rand(i + 1);
        [out[i], out[j]] = [out[j]!, out[i]!];
      }
      break;
    }
  }
  return out;
}

let mapWrites = 0;
const mapSet = Map.prototype.set;
beforeEach(() => {
  Map.prototype.set = function <K, V>(this: Map<K, V>, key: K, value: V) {
    mapWrites++;
    return mapSet.call(this, key, value) as Map<K, V>;
  };
});
afterEach(() => {
  Map.prototype.set = mapSet;
});

const cost = () => copiedSlots.count + mapWrites;
/** The per-event budget: a constant number of 32-slot path copies per trie level. */
const budget = (n: number) => 150 * (Math.ceil(Math.log(n) / Math.log(32)) + 1);

describe('clipsReducer at scale', () => {
  it('costs O(log n) per event, and accounts for every early update, under adversarial orderings', () => {
    fc.assert(
      fc.property(
        fc.constantFrom<Mode>('updatesFirst', 'neverArrive', 'oneClipMany', 'shuffled'),
        fc.integer({ min: 6_000, max: 16_000 }),
        fc.integer(),
        fc.constantFrom(0, 1, 100, 1_000, 10_000),
        (mode, size, seed, maxPendingUpdates) => {
          const events = session(mode, size, seed);
          let state = createClipsState({ maxPendingUpdates });
          let worst = 0;
          let applied = 0;
          for (const event of events) {
            if (event.type === 'clip') applied += state.pendingUpdates.get(event.clip.clip_uuid)?.length ?? 0;
            const before = cost();
            state = clipsReducer(state, event);
            worst = Math.max(worst, cost() - before);
          }
          expect(worst).toBeLessThanOrEqual(budget(events.length));
          expect(state.pendingUpdates.updateCount).toBeLessThanOrEqual(maxPendingUpdates);
          expect(state.orphanUpdates).toBe(state.droppedUpdates + applied + state.pendingUpdates.updateCount);
        },
      ),
      { numRuns: 25 },
    );
  });
});
