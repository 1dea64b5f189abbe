// An unmapped dynamic RTP payload type told from its packets (L16 or Opus, where they leave no
// doubt), on a scheduler so it can be stepped on virtual time.
import type { SchedulerLike, Subscription } from 'rxjs';
import { opusPacketSamples, type PayloadTypeSpec } from './payloadTypes.js';

/** The rates an L16 stream is taken at when its packets' timing names one (RFC 3551 and common senders). */
const L16_RATES = [8000, 11025, 12000, 16000, 22050, 24000, 32000, 44100, 48000] as const;
/** Packets of one payload type held while its codec is being told; beyond, it is given up. */
const MAX_HELD_PACKETS = 512;
/** The longest stretch of packets (by arrival) looked at before giving up, ms. */
const MAX_LOOK_MS = 3_000;
/** A packet that arrives this long after the previous one starts a burst (senders push several at once). */
const BURST_GAP_MS = 4;

/** What {@link PayloadTypeGuesser} decided for an unmapped payload type (once per type). */
export type PayloadTypeVerdict<T> =
  /** Told: the mapping, and every packet held meanwhile (all SSRCs of the type), in arrival order. */
  | { readonly kind: 'mapped'; readonly payloadType: number; readonly spec: PayloadTypeSpec; readonly mapping: string; readonly held: readonly T[] }
  /** Not told, and why; the packets held are let go (later ones are not held). */
  | { readonly kind: 'unknown'; readonly payloadType: number; readonly reason: string; readonly dropped: number };

interface Look<T> {
  readonly ssrc: number;
  readonly packets: Array<{ readonly bytes: number; readonly ts: number; readonly opusSamples: number; readonly even: boolean }>;
  /** Burst starts: (arrival ms, RTP timestamp). */
  readonly starts: Array<{ readonly at: number; readonly ts: number }>;
  lastAt: number;
  lastSeq: number;
  readonly held: T[];
  readonly deadline: Subscription;
}

/**
 * Tells the codec of a dynamic payload type nobody mapped, from its packets, where they leave
 * no doubt: L16 (each packet's timestamp step is its length over 2 bytes per sample and
 * channel; the rate from the timestamps against the arrival clock, snapped to a common rate
 * only when the measure is closer to it than to any other) or Opus (each step is what its TOC
 * byte says, on the 48 kHz clock). ffmpeg sends either as 97, GStreamer as 96, PBXes as 96-127.
 * Anything else, a static type it does not decode, or a sender that does not pace its packets
 * (no rate can be told within 3 s of the first packet) is unknown. Each payload type gets one
 * verdict, through `onVerdict`: on a packet, or when the 3 s run out (on `scheduler`).
 */
export class PayloadTypeGuesser<T> {
  private readonly looks = new Map<number, Look<T>>();
  private readonly decided = new Set<number>();

  constructor(
    private readonly scheduler: SchedulerLike,
    private readonly onVerdict: (verdict: PayloadTypeVerdict<T>) => void,
  ) {}

  /**
   * One packet of `pt` (not mapped): its SSRC, sequence number, timestamp and payload; `item` is
   * held while looking (a verdict takes it: replayed, or counted in its `dropped`). False when the
   * type was given up before this packet: drop it and count it.
   */
  observe(pt: number, ssrc: number, seq: number, timestamp: number, payload: Uint8Array, item: T): boolean {
    if (this.decided.has(pt)) return false;
    if (pt < 96) return this.giveUp(pt, undefined, 'is a static payload type this source does not decode (it takes PCMU 0, PCMA 8, G.722 9, L16 10 and 11)');
    const at = this.scheduler.now();
    let look = this.looks.get(pt);
    if (!look) {
      const deadline = this.scheduler.schedule(() => {
        const l = this.looks.get(pt);
        if (l) this.giveUp(pt, l, `its packets named no rate within ${MAX_LOOK_MS / 1000} s (a sender that does not pace them?)`);
      }, MAX_LOOK_MS);
      look = { ssrc, packets: [], starts: [], lastAt: -Infinity, lastSeq: (seq - 1) & 0xffff, held: [], deadline };
      this.looks.set(pt, look);
    }
    look.held.push(item);
    if (look.held.length > MAX_HELD_PACKETS) return this.giveUp(pt, look, `more than ${MAX_HELD_PACKETS} packets came before it could be told`);
    // The first SSRC of the type decides; packets out of order (or of other SSRCs) are only held.
    if (ssrc === look.ssrc && seq === ((look.lastSeq + 1) & 0xffff)) {
      look.lastSeq = seq;
      if (at - look.lastAt >= BURST_GAP_MS) look.starts.push({ at, ts: timestamp });
      look.lastAt = at;
      look.packets.push({ bytes: payload.byteLength, ts: timestamp, opusSamples: opusPacketSamples(payload), even: payload.byteLength % 2 === 0 });
    }
    const verdict = decide(look);
    if (verdict === undefined) return true;
    if (typeof verdict === 'string') return this.giveUp(pt, look, verdict);
    this.end(pt, look);
    this.onVerdict({ kind: 'mapped', payloadType: pt, spec: verdict, mapping: `${verdict.codec}/${verdict.rate}/${verdict.channels}`, held: look.held });
    return true;
  }

  /** Stop every wait (the source ends). */
  stop(): void {
    for (const look of this.looks.values()) look.deadline.unsubscribe();
    this.looks.clear();
  }

  private end(pt: number, look: Look<T> | undefined): void {
    look?.deadline.unsubscribe();
    this.looks.delete(pt);
    this.decided.add(pt);
  }

  /** The verdict `unknown`; true: the packet being observed is among the `dropped` it counts. */
  private giveUp(pt: number, look: Look<T> | undefined, reason: string): true {
    this.end(pt, look);
    this.onVerdict({ kind: 'unknown', payloadType: pt, reason, dropped: look?.held.length ?? 1 });
    return true;
  }
}

/** A spec, a reason it is neither L16 nor Opus, or undefined to look further. */
function decide(look: Look<unknown>): PayloadTypeSpec | string | undefined {
  const p = look.packets;
  if (p.length < 3) return undefined;
  const steps = p.slice(1).map((q, i) => (q.ts - p[i]!.ts) >>> 0);
  const prev = p.slice(0, -1);
  if (steps.every((d, i) => d > 0 && d === prev[i]!.opusSamples && prev[i]!.bytes <= 1275 * 3)) return { codec: 'opus', rate: 48000, channels: 2 };
  const channels = [1, 2].find((ch) => prev.every((q, i) => q.even && steps[i]! * 2 * ch === q.bytes));
  if (channels === undefined) return 'its packets are neither L16 (a timestamp step of one sample per 2 bytes per channel) nor Opus';
  const rate = pacedRate(look.starts);
  return rate === undefined ? undefined : { codec: 'L16', rate, channels };
}

/**
 * The sample rate the burst starts' timestamps and arrivals name (a least-squares slope), when
 * one common rate is nearer than its measure's uncertainty and no other is.
 */
function pacedRate(starts: ReadonlyArray<{ readonly at: number; readonly ts: number }>): number | undefined {
  if (starts.length < 3) return undefined;
  const t0 = starts[0]!;
  const xs = starts.map((s) => s.at - t0.at);
  const ys = starts.map((s) => (s.ts - t0.ts) >>> 0);
  const span = xs[xs.length - 1]!;
  if (span < 150) return undefined;
  const mx = xs.reduce((a, b) => a + b, 0) / xs.length;
  const my = ys.reduce((a, b) => a + b, 0) / ys.length;
  let sxy = 0;
  let sxx = 0;
  for (let i = 0; i < xs.length; i++) {
    sxy += (xs[i]! - mx) * (ys[i]! - my);
    sxx += (xs[i]! - mx) ** 2;
  }
  const perMs = sxy / sxx;
  if (!(perMs > 0)) return undefined;
  const worstMs = Math.max(...xs.map((x, i) => Math.abs(my + perMs * (x - mx) - ys[i]!) / perMs));
  const uncertainty = Math.max(0.01, (2 * worstMs) / span);
  const measured = perMs * 1000;
  const [best, next] = [...L16_RATES].sort((a, b) => Math.abs(measured / a - 1) - Math.abs(measured / b - 1));
  if (Math.abs(measured / best! - 1) > uncertainty) return undefined;
  if (Math.abs(measured / next! - 1) <= 2 * uncertainty) return undefined;
  return best;
}
