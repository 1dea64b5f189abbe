// RTP sequence numbers are 16 bits and wrap every 65536 packets (22 minutes at 50 packets/s);
// the jitter buffer orders by an extended number that keeps a roll-over count (RFC 3550 A.1).

/**
 * Extends 16-bit sequence numbers across wraparound: each value is placed at the extended
 * position nearest the highest one seen, so 65535 → 65536 (0 after one roll-over) and a
 * late 65534 arriving after 1 stays before it.
 *
 * ## Example
 * ```ts
 * import { SequenceExtender } from './rtpSequence.js';
 *
 * const ext = new SequenceExtender();
 * console.log([65534, 65535, 0, 65533, 1].map((s) => ext.extend(s))); // [65534, 65535, 65536, 65533, 65537]
 * ```
 */
export class SequenceExtender {
  private highest: number | undefined;

  /** The extended number of `seq` (0-65535). Never negative. */
  extend(seq: number): number {
    const s = seq & 0xffff;
    if (this.highest === undefined) {
      this.highest = s;
      return s;
    }
    // Signed 16-bit distance from the highest seen: within ±32768 it is the true distance.
    const delta = ((s - (this.highest & 0xffff)) << 16) >> 16;
    const ext = Math.max(0, this.highest + delta);
    if (ext > this.highest) this.highest = ext;
    return ext;
  }

  /** The highest extended number seen, or undefined before the first. */
  get highestSeen(): number | undefined {
    return this.highest;
  }

  /** Forget the history, e.g. when the sender restarted its numbering. */
  reset(): void {
    this.highest = undefined;
  }
}

/** Signed distance `a - b` between two 32-bit RTP timestamps, correct across wraparound. */
export function timestampDelta(a: number, b: number): number {
  return (a - b) | 0;
}
