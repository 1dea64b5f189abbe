// An unmapped dynamic RTP payload type told from its packets (G.711, L16 or Opus, where they
// leave no doubt), on a scheduler so it can be stepped on virtual time.
import type { SchedulerLike, Subscription } from 'rxjs';
import { label, tellContent, type ContentReading } from './payloadContent.js';
import { opusPacketSamples, type PayloadTypeSpec } from './payloadTypes.js';

/** The rates a G.711 or L16 stream is taken at when its packets' timing names one (RFC 3551 and common senders). */
const COMMON_RATES = [8000, 11025, 12000, 16000, 22050, 24000, 32000, 44100, 48000] as const;
/** Payload bytes kept (copied) per payload type for telling codecs apart by their samples: 0.5 s of 16 kHz G.711. */
const MAX_SAMPLE_BYTES = 8 * 1024;
/** Packets of one payload type held while its codec is being told; beyond, it is given up. */
const MAX_HELD_PACKETS = 512;
/** The longest stretch of packets (by arrival) looked at before giving up, ms. */
const MAX_LOOK_MS = 3_000;
/** A packet that arrives this long after the previous one starts a burst (senders push several at once). */
const BURST_GAP_MS = 4;

/** What {@link PayloadTypeGuesser} decided for an unmapped payload type (once per type). */
export type PayloadTypeVerdict<T> =
  /** Told: the mapping, and every packet held meanwhile (all SSRCs of the type), in arrival order. */
  | { readonly kind: 'mapped'; readonly payloadType: number; readonly spec: PayloadTypeSpec; readonly mapping: string; readonly evidence: string; readonly held: readonly T[] }
  /** Not told, and why; the packets held are let go (later ones are not held). */
  | { readonly kind: 'unknown'; readonly payloadType: number; readonly reason: string; readonly dropped: number };

interface Look<T> {
  readonly ssrc: number;
  readonly packets: Array<{ readonly bytes: number; readonly ts: number; readonly opusSamples: number; readonly even: boolean }>;
  /** The first payloads' bytes, in order (up to MAX_SAMPLE_BYTES), for the content test. */
  readonly content: Uint8Array;
  contentBytes: number;
  /** Burst starts: (arrival ms, RTP timestamp). */
  readonly starts: Array<{ readonly at: number; readonly ts: number }>;
  lastAt: number;
  lastSeq: number;
  /** What the look still waits for, said if the time runs out. */
  waiting: string;
  readonly held: T[];
  readonly deadline: Subscription;
}

/**
 * Tells the codec of a dynamic payload type nobody mapped, from its packets, where they leave
 * no doubt:
 * - **G.711** (PCMU, PCMA) at any clock rate: each packet's timestamp step is its length over
 *   one byte per sample and channel; μ-law and A-law are told apart by their samples (silence
 *   and sign patterns: the bytes read with the right law are smooth and centred, see
 *   `roughness`);
 * - **L16**: each step is the length over 2 bytes per sample and channel (two G.711 channels
 *   step the same way: the samples tell them apart too);
 * - **Opus**: each step is what its TOC byte says, on the 48 kHz clock.
 *
 * The rate of G.711 and L16 comes from the timestamps against the arrival clock, snapped to a
 * common rate only when the measure is closer to it than to any other. ffmpeg sends any of
 * them as 97, GStreamer as 96, PBXes as 96-127. Anything else, a static type it does not
 * decode, a sender that does not pace its packets (no rate can be told within 3 s of the first
 * packet), or samples that read alike under two codecs is unknown. Each payload type gets one
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
        if (l) this.giveUp(pt, l, l.waiting);
      }, MAX_LOOK_MS);
      look = { ssrc, packets: [], content: new Uint8Array(MAX_SAMPLE_BYTES), contentBytes: 0, starts: [], lastAt: -Infinity, lastSeq: (seq - 1) & 0xffff, waiting: `its packets named no rate within ${MAX_LOOK_MS / 1000} s (a sender that does not pace them?)`, held: [], deadline };
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
      const room = MAX_SAMPLE_BYTES - look.contentBytes;
      if (room > 0) {
        const n = Math.min(room, payload.byteLength);
        look.content.set(payload.subarray(0, n), look.contentBytes);
        look.contentBytes += n;
      }
    }
    const verdict = decide(look);
    if (verdict === undefined) return true;
    if (typeof verdict === 'string') return this.giveUp(pt, look, verdict);
    this.end(pt, look);
    const { spec, evidence } = verdict;
    this.onVerdict({ kind: 'mapped', payloadType: pt, spec, mapping: `${spec.codec}/${spec.rate}/${spec.channels}`, evidence, held: look.held });
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

/** What the packets were told to be, and by what. */
interface Told {
  readonly spec: PayloadTypeSpec;
  readonly evidence: string;
}

const LAW: Record<ContentReading['codec'], string> = { PCMU: 'μ-law', PCMA: 'A-law', L16: 'linear' };

/** A spec, a reason it is none of the codecs this tells, or undefined to look further. */
function decide(look: Look<unknown>): Told | string | undefined {
  const p = look.packets;
  if (p.length < 3) return undefined;
  const steps = p.slice(1).map((q, i) => (q.ts - p[i]!.ts) >>> 0);
  const prev = p.slice(0, -1);
  if (steps.every((d, i) => d > 0 && d === prev[i]!.opusSamples && prev[i]!.bytes <= 1275 * 3)) return { spec: { codec: 'opus', rate: 48000, channels: 2 }, evidence: 'each timestamp step is the duration its Opus TOC byte says' };
  // What the bytes per timestamp tick allow: 1 per channel for G.711, 2 for L16.
  const readings: ContentReading[] = [];
  for (const ch of [1, 2] as const) {
    if (prev.every((q, i) => steps[i]! > 0 && steps[i]! * ch === q.bytes)) readings.push({ codec: 'PCMU', channels: ch }, { codec: 'PCMA', channels: ch });
    if (prev.every((q, i) => q.even && steps[i]! > 0 && steps[i]! * 2 * ch === q.bytes)) readings.push({ codec: 'L16', channels: ch });
  }
  if (readings.length === 0) return 'its packets are neither G.711 (a timestamp step of one sample per byte per channel), L16 (per 2 bytes per channel) nor Opus (the duration its TOC byte says)';
  const rate = pacedRate(look.starts);
  if (rate === undefined) return undefined;
  const told = tellContent(look.content.subarray(0, look.contentBytes), readings);
  if ('undecided' in told) {
    const reason = `${told.undecided}: ${readings.map(label).join(' or ')} could not be told apart`;
    // Every byte the content test keeps is in: more packets will not settle it.
    if (look.contentBytes === look.content.byteLength) return reason;
    look.waiting = `${reason} within ${MAX_LOOK_MS / 1000} s`;
    return undefined;
  }
  const { codec, channels } = told.reading;
  const perTick = (codec === 'L16' ? 2 : 1) * channels;
  const law = readings.length > 1 ? `, ${LAW[codec]} by its samples` : '';
  return { spec: { codec, rate, channels }, evidence: `${perTick} byte${perTick > 1 ? 's' : ''} per timestamp tick, paced at ${rate} Hz${law}` };
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
  const [best, next] = [...COMMON_RATES].sort((a, b) => Math.abs(measured / a - 1) - Math.abs(measured / b - 1));
  if (Math.abs(measured / best! - 1) > uncertainty) return undefined;
  if (Math.abs(measured / next! - 1) <= 2 * uncertainty) return undefined;
  return best;
}
