// RTP payload types: the static ones of RFC 3551 we take, the dynamic ones the caller maps,
// and what each becomes for the service: passed through raw, wrapped in Ogg, or transcoded.
import type { SchedulerLike, Subscription } from 'rxjs';
import { InputError } from '../errors.js';
import { RAW_FORMAT_DESCRIPTORS, SAMPLE_RATES, type AudioFormat, type RawAudioFormat, type RawFormat, type SampleRate } from '../schema/audio.js';

/** Codec names as SDP spells them (`a=rtpmap`), case-insensitive on input. */
export type RtpCodecName = 'PCMU' | 'PCMA' | 'L16' | 'G722' | 'opus' | 'telephone-event' | 'CN';

/** What a payload type carries. `rate` is the RTP clock rate; `channels` defaults to 1. */
export interface PayloadTypeSpec {
  readonly codec: RtpCodecName | Lowercase<RtpCodecName> | 'pcmu' | 'pcma' | 'g722';
  readonly rate?: number | undefined;
  readonly channels?: number | undefined;
}

/** Static payload types of RFC 3551 that carry speech, plus 13 (comfort noise) and 101 (the usual DTMF). */
export const STATIC_PAYLOAD_TYPES: Readonly<Record<number, PayloadTypeSpec>> = {
  0: { codec: 'PCMU', rate: 8000, channels: 1 },
  8: { codec: 'PCMA', rate: 8000, channels: 1 },
  9: { codec: 'G722', rate: 8000, channels: 1 },
  10: { codec: 'L16', rate: 44100, channels: 2 },
  11: { codec: 'L16', rate: 44100, channels: 1 },
  13: { codec: 'CN', rate: 8000, channels: 1 },
  101: { codec: 'telephone-event', rate: 8000, channels: 1 },
};

/** How the audio of one payload type reaches the session. */
export type CodecRoute =
  /** Raw bytes the service takes as they are (G.711, L16 at a service rate). */
  | { readonly kind: 'raw'; readonly format: RawAudioFormat }
  /** Opus packets wrapped in an Ogg stream (the service takes `ogg`). */
  | { readonly kind: 'ogg' }
  /** Decoded by ffmpeg (`inputArgs`) to s16le at `format`. */
  | { readonly kind: 'ffmpeg'; readonly inputArgs: readonly string[]; readonly format: RawAudioFormat };

/** A payload type resolved: what it is, how long a payload lasts, how silence is spelled. */
export interface RtpCodec {
  readonly payloadType: number;
  readonly name: RtpCodecName;
  /** `audio` is played; `dtmf` and `cn` take their sequence slot and are dropped (counted). */
  readonly kind: 'audio' | 'dtmf' | 'cn';
  readonly clockRate: number;
  readonly channels: number;
  readonly route: CodecRoute;
  /** Duration of a payload in RTP clock ticks. */
  samplesOf(payload: Uint8Array): number;
  /** Bytes of the encoded stream that play as `samples` ticks of silence (not used for Opus). */
  silence(samples: number): Uint8Array;
}

const NAMES: Record<string, RtpCodecName> = {
  pcmu: 'PCMU',
  pcma: 'PCMA',
  l16: 'L16',
  g722: 'G722',
  opus: 'opus',
  'telephone-event': 'telephone-event',
  cn: 'CN',
};

function filled(pattern: readonly number[], count: number): Uint8Array {
  const out = new Uint8Array(pattern.length * count);
  if (pattern.every((b) => b === pattern[0])) out.fill(pattern[0] ?? 0);
  else for (let i = 0; i < out.length; i++) out[i] = pattern[i % pattern.length]!;
  return out;
}

function rawCodec(pt: number, name: RtpCodecName, format: RawFormat, rate: number, channels: number): RtpCodec {
  const d = RAW_FORMAT_DESCRIPTORS[format];
  const frame = d.bytesPerSample * channels;
  const serviceRate = (SAMPLE_RATES as readonly number[]).includes(rate);
  const frameSilence = Array.from({ length: channels }, () => d.silence).flat();
  return {
    payloadType: pt,
    name,
    kind: 'audio',
    clockRate: rate,
    channels,
    route: serviceRate
      ? { kind: 'raw', format: { audio_format: format, sample_rate: rate as SampleRate, num_channels: channels } }
      : { kind: 'ffmpeg', inputArgs: ['-f', format, '-ar', String(rate), '-ac', String(channels)], format: { audio_format: 's16le', sample_rate: nearestServiceRate(rate), num_channels: channels } },
    samplesOf: (p) => Math.floor(p.byteLength / frame),
    silence: (n) => filled(frameSilence, n),
  };
}

/** The smallest service rate at or above `rate` (so nothing is lost), else the highest. */
export function nearestServiceRate(rate: number): SampleRate {
  return SAMPLE_RATES.find((r) => r >= rate) ?? SAMPLE_RATES[SAMPLE_RATES.length - 1]!;
}

/** Frames × samples per frame of an Opus packet at 48 kHz, from its TOC byte (RFC 6716 §3.1). */
export function opusPacketSamples(p: Uint8Array): number {
  if (p.byteLength === 0) return 0;
  const toc = p[0]!;
  const config = toc >> 3;
  let frameSamples: number;
  if (config < 12) frameSamples = [480, 960, 1920, 2880][config & 3]!; // SILK 10/20/40/60 ms
  else if (config < 16) frameSamples = [480, 960][config & 1]!; // Hybrid 10/20 ms
  else frameSamples = [120, 240, 480, 960][config & 3]!; // CELT 2.5/5/10/20 ms
  const code = toc & 3;
  const frames = code === 0 ? 1 : code === 3 ? (p[1] ?? 0) & 0x3f : 2;
  return frames * frameSamples;
}

/**
 * Resolve a payload type: the caller's map first (dynamic types, or overriding a static one),
 * then {@link STATIC_PAYLOAD_TYPES}. Undefined when the type is unknown.
 * Throws `InputError('invalid_argument')` for a map entry naming an unknown codec.
 */
export function resolvePayloadType(pt: number, map: Readonly<Record<number, PayloadTypeSpec>> = {}): RtpCodec | undefined {
  const spec = map[pt] ?? STATIC_PAYLOAD_TYPES[pt];
  if (!spec) return undefined;
  const name = NAMES[String(spec.codec).toLowerCase()];
  if (!name) throw new InputError('invalid_argument', `payload type ${pt}: unknown codec '${String(spec.codec)}' (PCMU, PCMA, L16, G722, opus, telephone-event, CN)`, { path: `payloadTypes.${pt}` });
  const channels = spec.channels ?? 1;
  switch (name) {
    case 'PCMU':
      return rawCodec(pt, name, 'mulaw', spec.rate ?? 8000, channels);
    case 'PCMA':
      return rawCodec(pt, name, 'alaw', spec.rate ?? 8000, channels);
    case 'L16':
      return rawCodec(pt, name, 's16be', spec.rate ?? 44100, channels);
    case 'G722':
      // RFC 3551: the RTP clock says 8000 although G.722 samples at 16 kHz; one byte is one tick.
      return {
        payloadType: pt,
        name,
        kind: 'audio',
        clockRate: 8000,
        channels: 1,
        route: { kind: 'ffmpeg', inputArgs: ['-f', 'g722'], format: { audio_format: 's16le', sample_rate: 16000, num_channels: 1 } },
        samplesOf: (p) => p.byteLength,
        // What ffmpeg's G.722 encoder makes of digital silence in its steady state.
        silence: (n) => new Uint8Array(n).fill(0xfa),
      };
    case 'opus':
      return {
        payloadType: pt,
        name,
        kind: 'audio',
        clockRate: 48000,
        channels: spec.channels ?? 2,
        route: { kind: 'ogg' },
        samplesOf: opusPacketSamples,
        silence: () => new Uint8Array(0),
      };
    case 'telephone-event':
    case 'CN':
      return {
        payloadType: pt,
        name,
        kind: name === 'CN' ? 'cn' : 'dtmf',
        clockRate: spec.rate ?? 8000,
        channels: 1,
        route: { kind: 'raw', format: { audio_format: 'mulaw', sample_rate: 8000, num_channels: 1 } },
        samplesOf: () => 0,
        silence: () => new Uint8Array(0),
      };
  }
}

/** The format of the audio a leg with this codec emits. */
export function routeFormat(route: CodecRoute): AudioFormat {
  return route.kind === 'ogg' ? { audio_format: 'ogg' } : route.format;
}

/** Parse a CLI-style mapping `PT=codec[/rate[/channels]]`, e.g. `96=L16/16000/1`, `97=opus/48000/2`. */
export function parsePayloadTypeArg(arg: string): [number, PayloadTypeSpec] {
  const m = /^(\d{1,3})=([A-Za-z0-9-]+)(?:\/(\d+))?(?:\/(\d+))?$/.exec(arg.trim());
  const pt = m ? Number(m[1]) : NaN;
  if (!m || pt > 127) throw new InputError('invalid_argument', `--payload-type expects PT=codec[/rate[/channels]] with PT 0-127, got '${arg}'`, { path: 'payload-type' });
  const codec = m[2]!;
  if (!NAMES[codec.toLowerCase()]) throw new InputError('invalid_argument', `--payload-type ${arg}: unknown codec '${codec}' (PCMU, PCMA, L16, G722, opus, telephone-event, CN)`, { path: 'payload-type' });
  return [pt, { codec: codec as RtpCodecName, ...(m[3] ? { rate: Number(m[3]) } : {}), ...(m[4] ? { channels: Number(m[4]) } : {}) }];
}

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
