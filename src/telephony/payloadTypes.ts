// RTP payload types: the static ones of RFC 3551 we take, the dynamic ones the caller maps,
// and what each becomes for the service: passed through raw, wrapped in Ogg, or transcoded.
import { InputError } from '../errors/index.js';
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
