// One log of audio bytes by stream position, each byte held once: chunks appended in order
// (kept by reference when their source never writes a buffer again, else copied once into
// shared blocks), read back from any position as frames of up to N bytes (the one chunk
// grouper), and trimmed from the front. A reader is only a position: the log keeps no cursor.

/** Options of a {@link ChunkLog}. */
export interface ChunkLogOptions {
  /**
   * Size of the blocks copied chunks are packed into (default 64 KiB). A reader of exact
   * frames of `n` bytes gets views, never copies, when this is a multiple of `n`.
   */
  readonly blockBytes?: number | undefined;
  /**
   * Reuse the blocks trimmed away for later appends (no allocation once the log is warm). Only
   * for a reader that never keeps what it reads past the call (a WebSocket sender: ws copies
   * each frame as it sends it); anyone else may hold a view of a block, which must not change.
   */
  readonly recycle?: boolean | undefined;
}

/** Blocks kept for reuse at most (1 MiB of 64 KiB blocks). */
const SPARE_BLOCKS = 16;

const DEFAULT_BLOCK_BYTES = 64 * 1024;

/**
 * Audio bytes by stream position, from {@link ChunkLog.start} to {@link ChunkLog.end}.
 *
 * - `append(chunk, fresh)`: a fresh chunk (its source never writes into its buffer again) is
 *   kept by reference; any other is copied once, into the open block (no allocation per
 *   chunk: a block is allocated per `blockBytes`).
 * - `frame(pos, max)`: up to `max` bytes from `pos` as one buffer, a view wherever the bytes
 *   lie in one segment; small fresh chunks (under `max / 8` each) are grouped into one frame
 *   by copying them (their one copy). A copied block is never copied again.
 * - `slice(pos, n)`: exactly `n` bytes from `pos`: a view when they lie in one segment, else
 *   one copy of them.
 * - `trim(pos)`: drops every segment that ends at or before `pos`, O(1) amortized per segment.
 *   The open block stays while it has room (its later bytes follow the trimmed ones).
 * - `write(chunk)` then `commit(pos)`: a writer that groups bytes into frames (a live call's
 *   packets) copies them in past {@link ChunkLog.end} as they come, and makes them readable a
 *   frame at a time. Readers see nothing past `end`; `append` is a write and a commit of all.
 *
 * Bytes handed out are never written again: the log only appends after them, so a view may be
 * kept by whoever gets it. Not thread-safe, no I/O, no timers.
 */
export class ChunkLog {
  /** The segments: a fresh chunk, a copied chunk or a block (filled from its start). */
  private bufs: Array<Uint8Array | undefined> = [];
  /** Stream position where each segment ends. */
  private ends: number[] = [];
  /** Whether each segment was copied by the log (a block): never grouped, never copied again. */
  private copied: boolean[] = [];
  /** The first live slot. */
  private head = 0;
  /** Stream position where the first live segment starts. */
  private firstStart = 0;
  /** Stream position after the last readable byte. */
  private endPos = 0;
  /** Stream position after the last byte written (`endPos` or past it: see {@link ChunkLog.write}). */
  private writtenPos = 0;
  /** The open block (the last segment) and how much of it is filled. */
  private block: Buffer | undefined;
  private blockUsed = 0;
  /** The slot of the last read, where the next one most likely starts. */
  private hint = 0;
  /** Blocks trimmed away, for reuse (with `recycle`). */
  private readonly spare: Buffer[] | undefined;
  readonly blockBytes: number;

  constructor(options: ChunkLogOptions = {}) {
    const b = options.blockBytes ?? DEFAULT_BLOCK_BYTES;
    if (!Number.isInteger(b) || b <= 0) throw new RangeError(`blockBytes must be a positive integer, got ${b}`);
    this.blockBytes = b;
    this.spare = options.recycle === true ? [] : undefined;
  }

  /** Stream position of the first byte held. */
  get start(): number {
    return this.head < this.bufs.length ? this.firstStart : this.endPos;
  }

  /** Stream position after the last byte appended (or committed): readers read up to here. */
  get end(): number {
    return this.endPos;
  }

  /** Stream position after the last byte written, readable or not (at least {@link ChunkLog.end}). */
  get written(): number {
    return this.writtenPos;
  }

  /** Segments held (for tests and figures): fresh chunks, copied chunks and blocks. */
  get segments(): number {
    return this.bufs.length - this.head;
  }

  /** Append `chunk` at {@link ChunkLog.end}: by reference when `fresh`, else copied once. */
  append(chunk: Uint8Array, fresh: boolean): void {
    const len = chunk.byteLength;
    if (len === 0) return;
    if (fresh) {
      this.block = undefined;
      this.push(chunk, false, len);
    } else this.copyIn(chunk, len);
    this.endPos = this.writtenPos;
  }

  /**
   * Copy `chunk` in after {@link ChunkLog.written}, not readable yet: it becomes readable with
   * {@link ChunkLog.commit}. Always a copy, into the open block.
   */
  write(chunk: Uint8Array): void {
    const len = chunk.byteLength;
    if (len > 0) this.copyIn(chunk, len);
  }

  /** Every byte before `pos` (at most {@link ChunkLog.written}) becomes readable; {@link ChunkLog.end} never moves back. */
  commit(pos: number): void {
    if (pos > this.writtenPos) throw new RangeError(`cannot commit up to ${pos}: only ${this.writtenPos} bytes were written`);
    if (pos > this.endPos) this.endPos = pos;
  }

  /** A copy of the bytes written and not yet committed (for a writer that moves to another log). */
  uncommitted(): Uint8Array {
    const end = this.endPos;
    const n = this.writtenPos - end;
    if (n === 0) return new Uint8Array(0);
    this.endPos = this.writtenPos;
    try {
      return new Uint8Array(this.slice(end, n));
    } finally {
      this.endPos = end;
    }
  }

  /** Copy `len` bytes of `chunk` into the open block (a new one as each fills), past `written`. */
  private copyIn(chunk: Uint8Array, len: number): void {
    // Most chunks fit in the open block: one copy, three fields.
    const open = this.block;
    if (open !== undefined && len <= open.length - this.blockUsed) {
      open.set(chunk, this.blockUsed);
      this.blockUsed += len;
      this.ends[this.ends.length - 1]! += len;
      this.writtenPos += len;
      return;
    }
    let off = 0;
    while (off < len) {
      let b = this.block;
      if (b === undefined || this.blockUsed === b.length) {
        b = this.block = this.spare?.pop() ?? Buffer.allocUnsafe(this.blockBytes);
        this.blockUsed = 0;
        this.push(b, true, 0);
      }
      const n = Math.min(len - off, b.length - this.blockUsed);
      b.set(n === len ? chunk : chunk.subarray(off, off + n), this.blockUsed);
      this.blockUsed += n;
      off += n;
      this.ends[this.ends.length - 1]! += n;
      this.writtenPos += n;
    }
  }

  /** Move {@link ChunkLog.end} over `bytes` that are not kept (sent straight on); everything held (and written) is dropped first. */
  skip(bytes: number): void {
    this.clear();
    this.endPos += bytes;
    this.writtenPos = this.endPos;
    this.firstStart = this.endPos;
  }

  /** Drop every segment that ends at or before `pos` (the open block stays while it has room). */
  trim(pos: number): void {
    const { bufs, ends } = this;
    let h = this.head;
    while (h < bufs.length && ends[h]! <= pos) {
      // The open block keeps filling: its bytes before `pos` go with it later.
      if (h === bufs.length - 1 && bufs[h] === this.block && this.blockUsed < this.block!.length) break;
      this.firstStart = ends[h]!;
      this.retire(h);
      h++;
    }
    this.head = h;
    if (h === bufs.length) {
      this.clear();
    } else if (h > 1024 && h * 2 > bufs.length) {
      bufs.splice(0, h);
      ends.splice(0, h);
      this.copied.splice(0, h);
      this.hint = Math.max(0, this.hint - h);
      this.head = 0;
    }
  }

  /** Drop everything held, and what was written past the end ({@link ChunkLog.end} stays). */
  clear(): void {
    if (this.spare !== undefined) for (let k = this.head; k < this.bufs.length; k++) this.retire(k);
    this.bufs.length = 0;
    this.ends.length = 0;
    this.copied.length = 0;
    this.head = 0;
    this.hint = 0;
    this.block = undefined;
    this.blockUsed = 0;
    this.firstStart = this.endPos;
    this.writtenPos = this.endPos;
  }

  /**
   * Up to `max` bytes from `pos` (at least one byte must be held there) as one buffer: a view
   * of one segment, or small fresh chunks grouped into one copy.
   */
  frame(pos: number, max: number): Uint8Array {
    const k = this.slotOf(pos);
    const r = Math.min(this.ends[k]!, this.endPos) - pos;
    if (r >= max) return this.view(k, pos, max);
    const last = this.bufs.length;
    if (k + 1 >= last || this.copied[k] || r * 8 >= max) return this.view(k, pos, r);
    let total = r;
    for (let j = k + 1; j < last && total < max; j++) {
      const len = this.ends[j]! - this.ends[j - 1]!;
      // A fresh chunk is readable whole (appends commit); anything past `end` lies in a block.
      if (this.copied[j] || len * 8 >= max || this.ends[j]! > this.endPos) break;
      total += len;
    }
    if (total === r) return this.view(k, pos, r);
    return this.gather(k, pos, Math.min(total, max));
  }

  /** Exactly `n` bytes from `pos` (`n ≤ end − pos`): a view of one segment, else one copy. */
  slice(pos: number, n: number): Uint8Array {
    if (n <= 0) return new Uint8Array(0);
    if (pos < this.start || pos + n > this.endPos) throw new RangeError(`bytes ${pos}..${pos + n} are not all held (${this.start}..${this.endPos})`);
    const k = this.slotOf(pos);
    return this.ends[k]! - pos >= n ? this.view(k, pos, n) : this.gather(k, pos, n);
  }

  /** Let go of slot `k`: a block goes back to the spares (with `recycle`). */
  private retire(k: number): void {
    const buf = this.bufs[k];
    this.bufs[k] = undefined;
    if (this.spare !== undefined && this.copied[k] && buf !== undefined && buf.byteLength === this.blockBytes && this.spare.length < SPARE_BLOCKS) this.spare.push(buf as Buffer);
  }

  private push(buf: Uint8Array, copied: boolean, len: number): void {
    if (this.head === this.bufs.length) this.firstStart = this.writtenPos;
    this.bufs.push(buf);
    this.copied.push(copied);
    this.writtenPos += len;
    this.ends.push(this.writtenPos);
  }

  private startOf(k: number): number {
    return k === this.head ? this.firstStart : this.ends[k - 1]!;
  }

  /** The slot holding `pos`: from the last read's slot on (reads move forward), else a binary search. */
  private slotOf(pos: number): number {
    const { ends } = this;
    if (pos < this.start || pos >= this.endPos) throw new RangeError(`byte ${pos} is not held (${this.start}..${this.endPos})`);
    let k = this.hint;
    if (k < this.head || k >= ends.length || pos < this.startOf(k)) {
      let lo = this.head;
      let hi = ends.length - 1;
      while (lo < hi) {
        const mid = (lo + hi) >>> 1;
        if (ends[mid]! <= pos) lo = mid + 1;
        else hi = mid;
      }
      k = lo;
    }
    while (ends[k]! <= pos) k++;
    this.hint = k;
    return k;
  }

  private view(k: number, pos: number, n: number): Uint8Array {
    const buf = this.bufs[k]!;
    const off = pos - this.startOf(k);
    return off === 0 && n === buf.byteLength ? buf : buf.subarray(off, off + n);
  }

  private gather(k: number, pos: number, n: number): Uint8Array {
    const out = Buffer.allocUnsafe(n);
    let filled = 0;
    let at = pos;
    while (filled < n) {
      const buf = this.bufs[k]!;
      const off = at - this.startOf(k);
      const take = Math.min(n - filled, this.ends[k]! - at);
      out.set(off === 0 && take === buf.byteLength ? buf : buf.subarray(off, off + take), filled);
      filled += take;
      at += take;
      k++;
    }
    this.hint = Math.max(this.head, k - 1);
    return out;
  }
}
