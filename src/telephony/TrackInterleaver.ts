// Two mono tracks of one call (inbound and outbound, or a SIPREC call's two participants) into
// one two-channel stream: sample i of each track side by side, the lagging track padded with
// silence when it falls too far back. Samples of one byte (G.711) or two (16-bit PCM).

/**
 * Interleaves two mono tracks into frames of two samples (channel 1, channel 2).
 *
 * - Emits as soon as both tracks have samples; a track more than `maxSkewSamples` behind the
 *   other (or absent) is padded with `silence` so the call does not stall on a quiet leg.
 * - `end()` pads the shorter track and releases the rest.
 * - `sampleBytes` 1 (G.711, the default) or 2 (16-bit PCM, either byte order: bytes move in pairs).
 */
export class TrackInterleaver {
  private readonly queues: [Uint8Array[], Uint8Array[]] = [[], []];
  /** Bytes queued per track. */
  private readonly lengths: [number, number] = [0, 0];
  /** How far one track may run ahead, bytes, before the other is padded. */
  private readonly maxSkewBytes: number;

  constructor(
    private readonly silence: number,
    maxSkewSamples = 4000,
    private readonly sampleBytes: 1 | 2 = 1,
  ) {
    this.maxSkewBytes = maxSkewSamples * sampleBytes;
  }

  /** Add bytes of track 0 or 1; returns the interleaved frames ready now (maybe empty). */
  push(track: 0 | 1, bytes: Uint8Array): Uint8Array {
    if (bytes.byteLength > 0) {
      this.queues[track].push(bytes);
      this.lengths[track] += bytes.byteLength;
    }
    const other = track === 0 ? 1 : 0;
    const skew = this.lengths[track] - this.lengths[other];
    if (skew > this.maxSkewBytes) this.pad(other, this.whole(skew - this.maxSkewBytes));
    return this.take(this.whole(Math.min(this.lengths[0], this.lengths[1])));
  }

  /** Both tracks are over: pad the shorter one and release everything. */
  end(): Uint8Array {
    const n = this.whole(Math.max(this.lengths[0], this.lengths[1]) + this.sampleBytes - 1);
    for (const t of [0, 1] as const) if (this.lengths[t] < n) this.pad(t, n - this.lengths[t]);
    return this.take(n);
  }

  /** Bytes rounded down to whole samples. */
  private whole(bytes: number): number {
    return bytes - (bytes % this.sampleBytes);
  }

  private pad(track: 0 | 1, bytes: number): void {
    if (bytes <= 0) return;
    this.queues[track].push(new Uint8Array(bytes).fill(this.silence));
    this.lengths[track] += bytes;
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
    if (this.sampleBytes === 1) {
      for (let i = 0; i < n; i++) {
        out[2 * i] = a[i]!;
        out[2 * i + 1] = b[i]!;
      }
      return out;
    }
    for (let i = 0; i < n; i += 2) {
      out[2 * i] = a[i]!;
      out[2 * i + 1] = a[i + 1]!;
      out[2 * i + 2] = b[i]!;
      out[2 * i + 3] = b[i + 1]!;
    }
    return out;
  }
}
