// SDP offer and answer (RFC 3264) for a server that only receives: each audio stream of an
// offer gets the first codec of our preference the offer has, telephone-event is noted (its
// packets are dropped and counted), everything else is refused with port 0. SDP through
// sdp-transform, whose types stay in this module (the package's declarations never name them).
import { parse, write, type MediaDescription, type SessionDescription } from 'sdp-transform';
import { resolvePayloadType, type PayloadTypeSpec, type RtpCodec } from '../payloadTypes.js';
import { DEFAULT_SIP_CODECS, type SipCodecName } from './sipCodecs.js';

export { DEFAULT_SIP_CODECS, type SipCodecName };


/** Which way media flows, from the offerer's side. */
export type SdpDirection = 'sendrecv' | 'sendonly' | 'recvonly' | 'inactive';

/** One audio stream of an offer, and what we pick for it. */
export interface OfferedStream {
  /** Index of its m= line. */
  readonly index: number;
  /** `a=label` (SIPREC names each stream this way, RFC 7866 §8.1.1). */
  readonly label: string | undefined;
  /** Where the sender says it sends from (its c= and port), for the allow check. */
  readonly address: string;
  readonly port: number;
  /** The offerer's direction (c=0.0.0.0 reads `inactive`, the RFC 2543 hold). */
  readonly direction: SdpDirection;
  /** The codec picked, or undefined when the stream offers none we take. */
  readonly codec: RtpCodec | undefined;
  /** The payload types the stream's packets may carry: the codec, telephone-event, CN. */
  readonly payloadTypes: Readonly<Record<number, PayloadTypeSpec>>;
  /** The offered telephone-event type, answered so DTMF packets are known (and dropped). */
  readonly dtmf: { readonly payloadType: number; readonly rate: number } | undefined;
  /** a=ptime when given. */
  readonly ptime: number | undefined;
}

/** An offer read: its audio streams, and every m= line to answer (others refused). */
export interface ReadOffer {
  readonly session: SessionDescription;
  readonly audio: readonly OfferedStream[];
  /** The session's o= id and version. */
  readonly origin: { readonly sessionId: string; readonly version: number };
}

/** Why an offer was not acceptable (answered 488 or 400). */
export class SdpError extends Error {
  override readonly name = 'SdpError';
  constructor(
    readonly status: 400 | 488,
    message: string,
  ) {
    super(message);
  }
}

function rtpmapOf(m: MediaDescription, pt: number): { codec: string; rate: number | undefined; channels: number | undefined } | undefined {
  const r = m.rtp?.find((x) => x.payload === pt);
  if (r) return { codec: r.codec, rate: r.rate, channels: r.encoding === undefined ? undefined : Number(r.encoding) };
  return undefined;
}

/** Whether we can take this payload type as `name`: static types by number, dynamic ones by their rtpmap. */
function specFor(m: MediaDescription, pt: number): PayloadTypeSpec | undefined {
  const map = rtpmapOf(m, pt);
  if (map) {
    const codec = map.codec.toUpperCase();
    if (codec === 'PCMU' || codec === 'PCMA' || codec === 'G722' || codec === 'L16') return { codec: codec as SipCodecName, rate: map.rate, channels: map.channels ?? 1 };
    if (codec === 'TELEPHONE-EVENT') return { codec: 'telephone-event', rate: map.rate ?? 8000 };
    if (codec === 'CN') return { codec: 'CN', rate: map.rate ?? 8000 };
    return undefined;
  }
  // No rtpmap: only the static types carry their meaning in the number (RFC 3551).
  if (pt === 0) return { codec: 'PCMU', rate: 8000 };
  if (pt === 8) return { codec: 'PCMA', rate: 8000 };
  if (pt === 9) return { codec: 'G722', rate: 8000 };
  if (pt === 10) return { codec: 'L16', rate: 44100, channels: 2 };
  if (pt === 11) return { codec: 'L16', rate: 44100, channels: 1 };
  if (pt === 13) return { codec: 'CN', rate: 8000 };
  return undefined;
}

/** Mono only: a stream per participant is how SIPREC and phones send. L16 at any rate (ffmpeg resamples rates the service lacks). */
function acceptable(spec: PayloadTypeSpec, allowed: readonly SipCodecName[]): SipCodecName | undefined {
  const name = String(spec.codec).toUpperCase() as SipCodecName;
  if (!allowed.includes(name)) return undefined;
  if ((spec.channels ?? 1) !== 1) return undefined;
  return name;
}

function directionOf(m: MediaDescription, session: SessionDescription): SdpDirection {
  const c = m.connection?.ip ?? session.connection?.ip;
  if (c === '0.0.0.0') return 'inactive';
  return (m.direction ?? session.direction ?? 'sendrecv') as SdpDirection;
}

/** Read an offer and pick a codec for each audio stream (`codecs`: ours, in order of preference). Throws {@link SdpError}. */
export function readOffer(text: string, codecs: readonly SipCodecName[] = DEFAULT_SIP_CODECS): ReadOffer {
  let session: SessionDescription;
  try {
    session = parse(text);
  } catch (err) {
    throw new SdpError(400, `SDP could not be read: ${(err as Error).message}`);
  }
  if (session.version !== 0 || !Array.isArray(session.media) || session.origin === undefined) throw new SdpError(400, 'SDP without v=0, o= or m= lines');
  const audio: OfferedStream[] = [];
  session.media.forEach((m, index) => {
    if (m.type !== 'audio' || !/^RTP\/AVP$/i.test(m.protocol) || m.port === 0) return;
    const pts = String(m.payloads ?? '')
      .split(/\s+/)
      .filter((p) => /^\d+$/.test(p))
      .map(Number);
    let best: { rank: number; pt: number; spec: PayloadTypeSpec } | undefined;
    let dtmf: { payloadType: number; rate: number } | undefined;
    const payloadTypes: Record<number, PayloadTypeSpec> = {};
    for (const pt of pts) {
      const spec = specFor(m, pt);
      if (!spec) continue;
      if (spec.codec === 'telephone-event') {
        if (dtmf === undefined || spec.rate === 8000) dtmf = { payloadType: pt, rate: spec.rate ?? 8000 };
        payloadTypes[pt] = spec;
        continue;
      }
      if (spec.codec === 'CN') {
        payloadTypes[pt] = spec;
        continue;
      }
      const name = acceptable(spec, codecs);
      if (name === undefined) continue;
      const rank = codecs.indexOf(name);
      if (best === undefined || rank < best.rank) best = { rank, pt, spec };
    }
    if (best) payloadTypes[best.pt] = best.spec;
    const codec = best ? resolvePayloadType(best.pt, { [best.pt]: best.spec }) : undefined;
    const address = m.connection?.ip ?? session.connection?.ip ?? '';
    audio.push({ index, label: m.label === undefined ? undefined : String(m.label), address, port: m.port, direction: directionOf(m, session), codec, payloadTypes, dtmf, ptime: m.ptime });
  });
  return { session, audio, origin: { sessionId: String(session.origin.sessionId), version: Number(session.origin.sessionVersion) } };
}

/** What we answer for one audio stream: our port, and whether we take it. */
export interface AnsweredStream {
  readonly stream: OfferedStream;
  /** Our RTP port, or 0 when the stream is refused. */
  readonly port: number;
}

/** Our side of the answer: who we are, where we listen, our session's version. */
export interface AnswerOrigin {
  readonly address: string;
  readonly sessionId: string;
  readonly version: number;
}

/**
 * The answer to `offer` (RFC 3264 §6): every m= line in order, ours with our port, the codec
 * picked (and telephone-event), direction recvonly (inactive where the offerer sends nothing:
 * hold); each other line refused with port 0.
 */
export function writeAnswer(offer: ReadOffer, answered: readonly AnsweredStream[], origin: AnswerOrigin): string {
  const byIndex = new Map(answered.map((a) => [a.stream.index, a]));
  const media: MediaDescription[] = offer.session.media.map((m, index) => {
    const a = byIndex.get(index);
    if (!a || a.port === 0 || !a.stream.codec) {
      const first = String(m.payloads ?? '').split(/\s+/)[0] ?? '0';
      return { type: m.type, port: 0, protocol: m.protocol, payloads: first, rtp: [], fmtp: [] } as MediaDescription;
    }
    const s = a.stream;
    const codec = s.codec!;
    const spec = s.payloadTypes[codec.payloadType]!;
    const rtp: MediaDescription['rtp'] = [{ payload: codec.payloadType, codec: String(spec.codec).toUpperCase() === 'G722' ? 'G722' : String(spec.codec).toUpperCase(), rate: spec.rate ?? codec.clockRate }];
    const fmtp: MediaDescription['fmtp'] = [];
    const payloads = [codec.payloadType];
    if (s.dtmf) {
      rtp.push({ payload: s.dtmf.payloadType, codec: 'telephone-event', rate: s.dtmf.rate });
      fmtp.push({ payload: s.dtmf.payloadType, config: '0-16' });
      payloads.push(s.dtmf.payloadType);
    }
    const direction = s.direction === 'sendonly' || s.direction === 'sendrecv' ? 'recvonly' : 'inactive';
    return {
      type: 'audio',
      port: a.port,
      protocol: 'RTP/AVP',
      payloads: payloads.join(' '),
      rtp,
      fmtp,
      ...(s.label !== undefined ? { label: s.label } : {}),
      ...(s.ptime !== undefined ? { ptime: s.ptime } : {}),
      direction,
    } as MediaDescription;
  });
  const answer: SessionDescription = {
    version: 0,
    origin: { username: 'svc-stream', sessionId: origin.sessionId, sessionVersion: origin.version, netType: 'IN', ipVer: origin.address.includes(':') ? 6 : 4, address: origin.address },
    name: 'svc-stream',
    connection: { version: origin.address.includes(':') ? 6 : 4, ip: origin.address },
    timing: { start: 0, stop: 0 },
    media,
  };
  return write(answer);
}
