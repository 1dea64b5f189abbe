// The jitter buffer of one RTP stream, as a pure state machine over (packet, now): it puts
// packets back in sequence order, drops duplicates and late packets, and turns every hole in
// the sequence or the timestamps into a fill of silence, so the audio clock never slips.
import { timestampDelta } from './rtpSequence.js';

/** One packet as the buffer sees it. */
export interface JitterPacket {
  /** Extended sequence number (see `SequenceExtender`). */
  readonly seq: number;
  /** RTP timestamp (32 bits, wraps). */
  readonly timestamp: number;
  /** The audio, or undefined for a packet that takes a sequence slot but plays nothing (DTMF, comfort noise). */
  readonly payload: Uint8Array | undefined;
  /** Duration of the payload in RTP clock ticks (0 for a packet without audio). */
  readonly samples: number;
}

/** What the buffer releases, in play order. */
export type Playout =
  | { readonly kind: 'audio'; readonly seq: number; readonly payload: Uint8Array; readonly samples: number }
  /** Silence of `samples` clock ticks: for `lost` missing packets, or (lost 0) a timestamp gap such as suppressed silence. */
  | { readonly kind: 'fill'; readonly samples: number; readonly lost: number };

/** Counters of one buffer, updated in place. */
export interface JitterStats {
  /** Packets pushed (audio or not), duplicates and late ones included. */
  received: number;
  /** Packets that arrived after a packet with a higher sequence number and were still played. */
  reordered: number;
  /** Packets already held or played, dropped. */
  duplicated: number;
  /** Packets never received before their slot was played: filled with silence. */
  lost: number;
  /** Packets that arrived after their slot was filled, dropped. */
  late: number;
  /** Times the sequence jumped by more than 3000 and the buffer started over there. */
  resyncs: number;
}

/** Options of {@link JitterBuffer}: how long to wait for a missing packet, how many to hold behind a gap, and the largest gap filled with silence. */
export interface JitterBufferOptions {
  /** Longest a packet waits for a missing one before the gap is declared lost, in ms (default 60). */
  readonly playoutDelayMs?: number | undefined;
  /** Most packets held behind a gap; one more declares the gap lost at once (default 64). */
  readonly maxHeldPackets?: number | undefined;
  /** Largest timestamp gap filled with silence, in clock ticks; a larger (or negative) one is treated as a clock jump and only the lost packets are filled (default: 5 s at 8000). */
  readonly maxFillSamples?: number | undefined;
  /** Counters to update in place (default: a fresh set); `stats` is this object. */
  readonly stats?: JitterStats | undefined;
}

/** A sequence jump larger than this is a restart of the sender's numbering (RFC 3550's MAX_DROPOUT). */
export const MAX_DROPOUT = 3000;
/** How many lost sequence numbers are remembered to tell a late packet from a duplicate. */
const LOST_MEMORY = 1024;

/** Fresh {@link JitterStats}, every counter at zero. */
export function createJitterStats(): JitterStats {
  return { received: 0, reordered: 0, duplicated: 0, lost: 0, late: 0, resyncs: 0 };
}

interface Held {
  readonly packet: JitterPacket;
  readonly arrival: number;
}

/**
 * A reordering jitter buffer with a bounded playout delay.
 *
 * - In-order packets are released at once: the buffer adds no delay while nothing is missing.
 * - A packet after a hole is held until the missing one arrives or the oldest held packet has
 *   waited `playoutDelayMs` (or more than `maxHeldPackets` are held); then the missing packets
 *   are counted `lost` and released as one `fill` sized from the timestamp gap (or, when the
 *   gap is unusable, lost packets × the last packet's duration).
 * - A gap in the timestamps between consecutive packets (suppressed silence, a DTMF event) is a
 *   `fill` with `lost: 0`. Total released duration = the timestamp span of the stream.
 * - Duplicates (held or already played) are dropped and counted; a packet whose slot was
 *   already filled is dropped and counted `late`.
 * - Pure: time is the `now` argument; {@link deadline} says when {@link expire} has work.
 *
 * ## Example
 * ```ts
 * import { JitterBuffer } from 'svc-stream/telephony';
 *
 * const jb = new JitterBuffer({ playoutDelayMs: 60 });
 * const pkt = (seq: number) => ({ seq, timestamp: seq * 160, payload: new Uint8Array(160), samples: 160 });
 * jb.push(pkt(1), 0); // [audio 1]
 * jb.push(pkt(3), 20); // [] (3 waits for 2)
 * console.log(jb.deadline); // 80
 * console.log(jb.expire(80).map((p) => p.kind)); // ['fill', 'audio']
 * console.log(jb.stats.lost); // 1
 * ```
 */
export class JitterBuffer {
  readonly stats: JitterStats;
  private readonly delay: number;
  private readonly maxHeld: number;
  private readonly maxFill: number;
  private readonly held = new Map<number, Held>();
  /** `held.size`, kept beside the fields the in-order path reads: it need not touch the Map (a cold cache line or two per packet at hundreds of legs). */
  private holding = 0;
  private readonly lostSeqs = new Set<number>();
  private lostOrder: number[] = [];
  private start: number | undefined;
  /** The next sequence number to play. */
  private next = 0;
  private highestSeen = -1;
  /** Timestamp where the next audio is expected to start; undefined before the first audio. */
  private expectedTs: number | undefined;
  private lastSamples = 0;
  /** Lost packets not yet reported in a fill. */
  private pendingLost = 0;

  constructor(options: JitterBufferOptions = {}) {
    this.delay = options.playoutDelayMs ?? 60;
    this.maxHeld = options.maxHeldPackets ?? 64;
    this.maxFill = options.maxFillSamples ?? 5 * 8000;
    this.stats = options.stats ?? createJitterStats();
  }

  /** Packets waiting behind a gap. */
  get heldCount(): number {
    return this.held.size;
  }

  /** When {@link expire} will next release something (ms, the clock of `now`), or undefined. */
  get deadline(): number | undefined {
    let oldest: number | undefined;
    for (const h of this.held.values()) if (oldest === undefined || h.arrival < oldest) oldest = h.arrival;
    return oldest === undefined ? undefined : oldest + this.delay;
  }

  /** Take one packet that arrived at `now`; returns what can be played now. */
  push(packet: JitterPacket, now: number): Playout[] {
    this.stats.received++;
    const out: Playout[] = [];
    if (this.start === undefined) {
      this.start = packet.seq;
      this.next = packet.seq;
    } else if (Math.abs(packet.seq - this.next) > MAX_DROPOUT) {
      this.stats.resyncs++;
      this.releaseAll(out);
      this.start = packet.seq;
      this.next = packet.seq;
      this.highestSeen = -1;
      this.expectedTs = undefined;
      this.lostSeqs.clear();
      this.lostOrder = [];
    }
    // In order with nothing held (the common case): straight out, no map traffic.
    if (packet.seq === this.next && this.holding === 0) {
      this.highestSeen = packet.seq;
      this.next++;
      this.play(packet, out);
      return out;
    }
    if (packet.seq < this.next) {
      if (this.lostSeqs.delete(packet.seq) || packet.seq < this.start) this.stats.late++;
      else this.stats.duplicated++;
      return out;
    }
    if (this.held.has(packet.seq)) {
      this.stats.duplicated++;
      return out;
    }
    if (packet.seq < this.highestSeen) this.stats.reordered++;
    else this.highestSeen = packet.seq;
    this.held.set(packet.seq, { packet, arrival: now });
    this.holding++;
    this.drain(out);
    if (this.held.size > this.maxHeld) this.skipGap(out);
    return out;
  }

  /**
   * The in-order path, without a packet object or a result array: when audio of `samples` ticks
   * at `timestamp` is the very next packet and nothing is held, take it as {@link push} would
   * and return the silence to play before it (clock ticks of a timestamp gap, usually 0); the
   * caller plays the payload itself. Returns -1, taking nothing, in every other case: then
   * {@link push} it.
   */
  takeNext(seq: number, timestamp: number, samples: number): number {
    if (seq !== this.next || this.start === undefined || this.holding !== 0) return -1;
    this.stats.received++;
    this.highestSeen = seq;
    this.next++;
    const fill = this.fillBefore(timestamp);
    this.expectedTs = (timestamp + samples) >>> 0;
    this.lastSamples = samples;
    return fill;
  }

  /** Release what has waited `playoutDelayMs` by `now`: the gaps in front of it are lost. */
  expire(now: number): Playout[] {
    const out: Playout[] = [];
    for (;;) {
      const d = this.deadline;
      if (d === undefined || d > now) break;
      this.skipGap(out);
    }
    return out;
  }

  /** The stream ended: release everything held, gaps counted as lost. */
  flush(): Playout[] {
    const out: Playout[] = [];
    this.releaseAll(out);
    return out;
  }

  private releaseAll(out: Playout[]): void {
    while (this.held.size > 0) this.skipGap(out);
  }

  /** Declare the hole before the lowest held packet lost, then play on. */
  private skipGap(out: Playout[]): void {
    let lowest = Infinity;
    for (const s of this.held.keys()) if (s < lowest) lowest = s;
    if (lowest === Infinity) return;
    const missing = lowest - this.next;
    if (missing > 0) {
      this.stats.lost += missing;
      this.pendingLost += missing;
      for (let s = this.next; s < lowest && s < this.next + LOST_MEMORY; s++) this.rememberLost(s);
      this.next = lowest;
    }
    this.drain(out);
  }

  private rememberLost(seq: number): void {
    this.lostSeqs.add(seq);
    this.lostOrder.push(seq);
    if (this.lostOrder.length > LOST_MEMORY) {
      const drop = this.lostOrder.splice(0, this.lostOrder.length - LOST_MEMORY);
      for (const s of drop) this.lostSeqs.delete(s);
    }
  }

  private drain(out: Playout[]): void {
    for (let h = this.held.get(this.next); h !== undefined; h = this.held.get(this.next)) {
      this.held.delete(this.next);
      this.holding--;
      this.next++;
      this.play(h.packet, out);
    }
  }

  /** The silence owed before audio at `timestamp`: a timestamp gap, or the lost packets' length; clears the lost count. */
  private fillBefore(timestamp: number): number {
    let fill = 0;
    if (this.expectedTs !== undefined) {
      const gap = timestampDelta(timestamp, this.expectedTs);
      fill = gap > 0 && gap <= this.maxFill ? gap : 0;
      if (fill === 0 && this.pendingLost > 0) fill = this.pendingLost * this.lastSamples;
    }
    this.pendingLost = 0;
    return fill;
  }

  private play(p: JitterPacket, out: Playout[]): void {
    if (p.payload === undefined) return; // takes its slot, plays nothing; the timestamps tell how long
    const lost = this.pendingLost;
    const fill = this.fillBefore(p.timestamp);
    if (fill > 0) out.push({ kind: 'fill', samples: fill, lost });
    out.push({ kind: 'audio', seq: p.seq, payload: p.payload, samples: p.samples });
    this.expectedTs = (p.timestamp + p.samples) >>> 0;
    this.lastSamples = p.samples;
  }
}
