// Two mono 8-bit tracks of one call (inbound, outbound) into one two-channel stream: sample i
// of each track side by side, the lagging track padded with silence when it falls too far back.

/**
 * Interleaves two byte-per-sample tracks into frames of two samples (channel 1, channel 2).
 *
 * - Emits as soon as both tracks have samples; a track more than `maxSkewSamples` behind the
 *   other (or absent) is padded with `silence` so the call does not stall on a quiet leg.
 * - `end()` pads the shorter track and releases the rest.
 */
export class TrackInterleaver {
  private readonly queues: [Uint8Array[], Uint8Array[]] = [[], []];
  private readonly lengths: [number, number] = [0, 0];

  constructor(
    private readonly silence: number,
    private readonly maxSkewSamples = 4000,
  ) {}

  /** Add bytes of track 0 or 1; returns the interleaved frames ready now (maybe empty). */
  push(track: 0 | 1, bytes: Uint8Array): Uint8Array {
    if (bytes.byteLength > 0) {
      this.queues[track].push(bytes);
      this.lengths[track] += bytes.byteLength;
    }
    const other = track === 0 ? 1 : 0;
    const skew = this.lengths[track] - this.lengths[other];
    if (skew > this.maxSkewSamples) this.pad(other, skew - this.maxSkewSamples);
    return this.take(Math.min(this.lengths[0], this.lengths[1]));
  }

  /** Both tracks are over: pad the shorter one and release everything. */
  end(): Uint8Array {
    const n = Math.max(this.lengths[0], this.lengths[1]);
    for (const t of [0, 1] as const) if (this.lengths[t] < n) this.pad(t, n - this.lengths[t]);
    return this.take(n);
  }

  private pad(track: 0 | 1, samples: number): void {
    this.queues[track].push(new Uint8Array(samples).fill(this.silence));
    this.lengths[track] += samples;
  }

  private read(track: 0 | 1, n: number): Uint8Array {
    const q = this.queues[track];
    const out = new Uint8Array(n);
    let filled = 0;
    while (filled < n) {
      const head = q[0]!;
      const k = Math.min(head.byteLength, n - filled);
      out.set(head.subarray(0, k), filled);
      filled += k;
      if (k === head.byteLength) q.shift();
      else q[0] = head.subarray(k);
    }
    this.lengths[track] -= n;
    return out;
  }

  private take(n: number): Uint8Array {
    if (n <= 0) return new Uint8Array(0);
    const a = this.read(0, n);
    const b = this.read(1, n);
    const out = new Uint8Array(n * 2);
    for (let i = 0; i < n; i++) {
      out[2 * i] = a[i]!;
      out[2 * i + 1] = b[i]!;
    }
    return out;
  }
}
