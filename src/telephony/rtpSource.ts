// RTP over UDP in, one call leg per SSRC out: parsing with rtp.js, RTCP and non-audio payload
// types set aside and counted, each leg's packets through its own jitter buffer.
import dgram from 'node:dgram';
import type { AddressInfo } from 'node:net';
import { asyncScheduler, Observable, type SchedulerLike } from 'rxjs';
import type * as RtpPackets from 'rtp.js/packets';
import { runFfmpeg } from '../audio/ffmpegProcess.js';
import { withAudioMeta, type AudioObservable } from '../audio/meta.js';
import { AudioSourceError, InputError } from '../errors.js';
import type { AudioFormat } from '../schema/audio.js';
import { PayloadTypeGuesser, resolvePayloadType, routeFormat, type PayloadTypeSpec, type RtpCodec } from './payloadTypes.js';
import { PlayoutStream, type StreamStats } from './playoutStream.js';
import { FrameClock } from './frameClock.js';
import { parseRtpHeader } from './rtpHeader.js';
import { SequenceExtender } from './rtpSequence.js';
import { warnOnce } from './limitWarning.js';
import type { LimitWarning, PayloadTypeWarning, WarningHandler } from '../warnings.js';

/** One direction of one call: the packets of one SSRC. */
export interface CallLeg {
  /** `rtp-<ssrc in hex>`, unique while the source runs. */
  readonly id: string;
  readonly ssrc: number;
  /** The payload type of the leg's first audio packet; packets of other audio types are dropped. */
  readonly payloadType: number;
  readonly codec: RtpCodec;
  /** What `audio$` carries: mulaw/alaw/s16be as sent, s16le after ffmpeg, or `ogg` for Opus. */
  readonly format: AudioFormat;
  /** The leg's audio in play order, gaps filled (see `LiveAudio` for hot/kept semantics). */
  readonly audio$: AudioObservable;
  /** Live counters. */
  readonly stats: StreamStats;
  /** Where the packets come from. */
  readonly remote: { readonly address: string; readonly port: number };
}

/** Counters of the socket, updated in place. */
export interface RtpSourceStats {
  /** Datagrams received. */
  datagrams: number;
  /** RTCP packets ignored (also counted on the leg whose SSRC sent them). */
  rtcp: number;
  /** Datagrams that are neither RTP nor RTCP, or fail to parse. */
  malformed: number;
  /** RTP packets of a payload type neither static nor in `payloadTypes`. */
  unknownPayloadType: number;
  /** DTMF / comfort-noise packets of an SSRC with no leg yet (a leg starts on audio). */
  nonAudioBeforeLeg: number;
  /** Legs started. */
  legs: number;
  /**
   * Audio packets of a new SSRC dropped because `maxLegs` legs were running. Every such packet
   * counts (the source keeps no list of refused SSRCs, so a flood of them costs no memory).
   */
  refusedLegs: number;
  /** Datagrams dropped because their source address is not in `allowedSources`. */
  disallowedSource: number;
}

/** Fresh {@link RtpSourceStats}, every counter at zero; pass it as `stats` and read it while the socket runs. */
export function createRtpSourceStats(): RtpSourceStats {
  return { datagrams: 0, rtcp: 0, malformed: 0, unknownPayloadType: 0, nonAudioBeforeLeg: 0, legs: 0, refusedLegs: 0, disallowedSource: 0 };
}

/** Legs at once by default: each is a jitter buffer and, through `analyzeCalls`, a session. */
export const DEFAULT_MAX_LEGS = 64;

/** Options of {@link rtpSource}: bind address, dynamic payload types, jitter and idle bounds, socket buffer, counters, ffmpeg and scheduler. */
export interface RtpSourceOptions {
  /** Interface to bind (default 127.0.0.1). */
  readonly host?: string | undefined;
  /** UDP port (default 0: any free port; see `onListening`). */
  readonly port?: number | undefined;
  /** Dynamic payload types, e.g. `{ 96: { codec: 'L16', rate: 16000 }, 97: { codec: 'opus' } }`; may override static ones. */
  readonly payloadTypes?: Readonly<Record<number, PayloadTypeSpec>> | undefined;
  /** Longest wait for a missing packet before it is declared lost, ms (default 60). */
  readonly playoutDelayMs?: number | undefined;
  /** A leg ends after this long without a packet, ms (default 5000). */
  readonly idleTimeoutMs?: number | undefined;
  /** Most packets held behind a gap (default 64). */
  readonly maxHeldPackets?: number | undefined;
  /** Called with the bound address once listening (the port, when port 0 was asked). */
  readonly onListening?: ((address: AddressInfo) => void) | undefined;
  /** Socket receive buffer, bytes (default: the OS's). Raise it for many calls. */
  readonly recvBufferSize?: number | undefined;
  /** Live counters of the socket. */
  readonly stats?: RtpSourceStats | undefined;
  /** ffmpeg binary for payload types that need decoding (G.722, L16 at other rates). */
  readonly ffmpegPath?: string | undefined;
  /** Scheduler for every timer (default `asyncScheduler`). */
  readonly scheduler?: SchedulerLike | undefined;
  /** Called with each datagram's arrival before parsing (instrumentation). */
  readonly onDatagram?: (bytes: Buffer, ssrc: number | undefined) => void;
  /** The socket, for the edge (default `dgram.createSocket('udp4')`). */
  readonly socketFactory?: (() => dgram.Socket) | undefined;
  /**
   * Most legs at once (default 64). A packet that would start one more is dropped and counted
   * in `stats.refusedLegs`; a place frees when a leg ends (`idleTimeoutMs` without packets).
   * The first refusal is reported once through `onWarning`.
   */
  readonly maxLegs?: number | undefined;
  /**
   * Told once per subscription, the first time `maxLegs` refuses a leg (code `max_legs`, with the
   * option to raise). Default: `process.emitWarning` (printed once to stderr, code
   * `SVC_STREAM_MAX_LEGS`). Later refusals are only counted in `stats.refusedLegs`.
   */
  readonly onWarning?: WarningHandler<LimitWarning | PayloadTypeWarning> | undefined;
  /**
   * A latency budget, ms (default 0: each packet's audio goes on as it is released). Above 0, a
   * leg's 20 ms packets are joined into frames of up to `frameMs` of audio before the session
   * sends them: five times fewer frames (sends, masks, syscalls) at 100 ms, for up to
   * `frameMs − 20` ms more latency per chunk (a frame that is not full goes once its oldest
   * chunk has waited `frameMs`, from one clock per source). Raw codecs only (G.711, L16); Opus
   * and ffmpeg-decoded legs are not grouped.
   */
  readonly frameMs?: number | undefined;
  /**
   * Take datagrams only from these senders: IP addresses (`'10.0.0.5'`; IPv4-mapped IPv6 forms
   * match their IPv4 address), or a predicate on the sender. Others are dropped before parsing and
   * counted in `stats.disallowedSource`. Default: any sender.
   */
  readonly allowedSources?: readonly string[] | ((remote: { readonly address: string; readonly port: number }) => boolean) | undefined;
}

/** `::ffff:10.0.0.5` and `10.0.0.5` are one sender. */
function plainAddress(address: string): string {
  return address.startsWith('::ffff:') && address.includes('.') ? address.slice(7) : address.toLowerCase();
}

function sourceFilter(allowed: RtpSourceOptions['allowedSources']): ((rinfo: dgram.RemoteInfo) => boolean) | undefined {
  if (allowed === undefined) return undefined;
  if (typeof allowed === 'function') {
    return (rinfo) => {
      try {
        return allowed({ address: rinfo.address, port: rinfo.port }) === true;
      } catch {
        return false;
      }
    };
  }
  const set = new Set(allowed.map(plainAddress));
  return (rinfo) => set.has(plainAddress(rinfo.address));
}

function legAudio(stream: PlayoutStream, codec: RtpCodec, options: RtpSourceOptions): AudioObservable {
  const route = codec.route;
  if (route.kind !== 'ffmpeg') return stream.live.audio$;
  const decoded = runFfmpeg({
    ...(options.ffmpegPath !== undefined ? { ffmpegPath: options.ffmpegPath } : {}),
    inputArgs: route.inputArgs,
    outputArgs: ['-f', route.format.audio_format, '-ar', String(route.format.sample_rate), '-ac', String(route.format.num_channels)],
    input: { kind: 'observable', source: stream.live.audio$ },
    flow: undefined,
  });
  return withAudioMeta(decoded, { format: route.format });
}

// rtp.js (about 0.8 MB of heap once loaded) loads on the first subscription to an
// rtpSource, not with the package: `import 'svc-stream'` need not pay for it.
let rtpPackets: Promise<typeof RtpPackets> | undefined;
const loadRtpPackets = (): Promise<typeof RtpPackets> => (rtpPackets ??= import('rtp.js/packets'));

/**
 * Listen for RTP on a UDP port and emit one {@link CallLeg} per SSRC.
 *
 * - Cold: each subscription binds its own socket (port 0 picks a free one, reported through
 *   `onListening`); unsubscribing closes it and ends every leg's audio.
 * - A leg starts on the first audio packet of a new SSRC. PCMU (0) and PCMA (8) pass through as
 *   mulaw/alaw 8000 Hz, L16 (10, 11 and dynamic types at a service rate) as s16be; G.722 and L16 at
 *   other rates are decoded by ffmpeg to s16le; Opus is wrapped in Ogg. DTMF (telephone-event)
 *   and comfort noise (13) take their sequence slot and are dropped and counted; RTCP on the same
 *   port is ignored and counted.
 * - Each leg has a jitter buffer (`JitterBuffer`): sequence numbers extended across wraparound,
 *   reordering within `playoutDelayMs`, duplicates and late packets dropped, lost packets and
 *   timestamp gaps filled with codec silence, so the leg's audio lasts as long as its timestamps.
 * - Bounded: at most `maxLegs` (64) legs at once, packets of further SSRCs dropped and counted
 *   (`refusedLegs`), the first refusal reported once (`onWarning`); with `allowedSources`, datagrams from other senders are dropped unparsed.
 * - A leg's audio completes after `idleTimeoutMs` without packets. The source itself never
 *   completes; it errors with `AudioSourceError('source_error')` when the socket fails to bind.
 * - Every timer goes through `scheduler`.
 *
 * ## Example
 * ```ts
 * import { rtpSource } from 'svc-stream/telephony';
 *
 * // ffmpeg -re -i samples/call.wav -ar 8000 -ac 1 -acodec pcm_mulaw -f rtp rtp://127.0.0.1:5004
 * rtpSource({ port: 5004 }).subscribe((leg) => {
 *   console.log('call leg', leg.id, leg.codec.name);
 *   leg.audio$.subscribe({ complete: () => console.log(leg.id, 'ended', leg.stats) });
 * });
 * ```
 */
export function rtpSource(options: RtpSourceOptions = {}): Observable<CallLeg> {
  let payloadTypes = options.payloadTypes ?? {};
  // Fail early on a bad map, not at the first packet.
  for (const pt of Object.keys(payloadTypes)) resolvePayloadType(Number(pt), payloadTypes);
  const maxLegs = options.maxLegs ?? DEFAULT_MAX_LEGS;
  if (!Number.isInteger(maxLegs) || maxLegs < 1) throw new InputError('invalid_argument', `rtpSource: maxLegs must be a positive integer, got ${maxLegs}`);
  const allowed = sourceFilter(options.allowedSources);
  const frameMs = options.frameMs ?? 0;
  if (!(frameMs >= 0) || !Number.isFinite(frameMs)) throw new InputError('invalid_argument', `rtpSource: frameMs must be 0 or more, got ${frameMs}`);
  return new Observable<CallLeg>((subscriber) => {
    const stats = options.stats ?? createRtpSourceStats();
    const scheduler = options.scheduler ?? asyncScheduler;
    const frameClock = frameMs > 0 ? new FrameClock(frameMs, scheduler) : undefined;
    const legs = new Map<number, { stream: PlayoutStream; ext: SequenceExtender; payloadType: number }>();
    const socket = options.socketFactory?.() ?? dgram.createSocket('udp4');
    const warnRefused = warnOnce(
      {
        code: 'max_legs',
        option: 'maxLegs',
        limit: maxLegs,
        message: `rtpSource: a new call leg was refused because ${maxLegs} legs are running (maxLegs); further refusals are counted in stats.refusedLegs. Raise maxLegs to take more calls at once.`,
      },
      options.onWarning,
    );
    // A dynamic payload type nobody mapped: told from its packets where they leave no doubt, said once either way.
    const guesser = new PayloadTypeGuesser<[Buffer, dgram.RemoteInfo]>(scheduler, (v) => {
      const from = v.kind === 'mapped' && v.held[0] ? ` (from ${v.held[0][1].address}:${v.held[0][1].port})` : '';
      warnOnce(
        v.kind === 'mapped'
          ? { code: 'inferred_payload_type', option: 'payloadTypes', payloadType: v.payloadType, mapping: v.mapping, message: `rtpSource: payload type ${v.payloadType}${from} is not mapped; its packets are L16 or Opus beyond doubt and are taken as ${v.mapping}. Map it in payloadTypes to be sure.` }
          : { code: 'unmapped_payload_type', option: 'payloadTypes', payloadType: v.payloadType, mapping: undefined, message: `rtpSource: payload type ${v.payloadType} ${v.payloadType < 96 ? v.reason : `is not mapped and ${v.reason}`}; its packets are dropped and counted in stats.unknownPayloadType. Map it in payloadTypes (e.g. { ${v.payloadType}: { codec: 'L16', rate: 16000 } }).` },
        options.onWarning,
      )();
      if (v.kind === 'unknown') stats.unknownPayloadType += v.dropped;
      if (v.kind !== 'mapped' || closed) return;
      payloadTypes = { ...payloadTypes, [v.payloadType]: v.spec };
      for (const [held, from] of v.held) onMessage(held, from, true);
    });
    let closed = false;
    // Set before datagrams are listened to and the socket binds.
    let rtp!: typeof RtpPackets;

    const startLeg = (ssrc: number, codec: RtpCodec, rinfo: dgram.RemoteInfo) => {
      const stream: PlayoutStream = new PlayoutStream(codec, {
        scheduler,
        ...(options.playoutDelayMs !== undefined ? { playoutDelayMs: options.playoutDelayMs } : {}),
        ...(options.idleTimeoutMs !== undefined ? { idleTimeoutMs: options.idleTimeoutMs } : {}),
        ...(options.maxHeldPackets !== undefined ? { maxHeldPackets: options.maxHeldPackets } : {}),
        ...(frameClock ? { grouping: { clock: frameClock, scheduler } } : {}),
        // A new packet of this SSRC after the end is a new leg (a new call reusing the SSRC).
        onEnd: () => {
          if (legs.get(ssrc)?.stream === stream) legs.delete(ssrc);
        },
      });
      const entry = { stream, ext: new SequenceExtender(), payloadType: codec.payloadType };
      legs.set(ssrc, entry);
      stats.legs++;
      subscriber.next({
        id: `rtp-${ssrc.toString(16).padStart(8, '0')}`,
        ssrc,
        payloadType: codec.payloadType,
        codec,
        format: routeFormat(codec.route),
        audio$: legAudio(stream, codec, options),
        stats: stream.stats,
        remote: { address: rinfo.address, port: rinfo.port },
      });
      return entry;
    };

    // `replayed`: a datagram held while its payload type was being told, counted when it came.
    const onMessage = (msg: Buffer, rinfo: dgram.RemoteInfo, replayed = false): void => {
      if (!replayed) stats.datagrams++;
      if (allowed && !allowed(rinfo)) {
        stats.disallowedSource++;
        return;
      }
      if (msg.length < 8) {
        stats.malformed++;
        options.onDatagram?.(msg, undefined);
        return;
      }
      const view = new DataView(msg.buffer, msg.byteOffset, msg.byteLength);
      // RTCP first: a marker bit plus payload type 72-76 looks like RTP to isRtp (RFC 5761).
      if (rtp.isRtcp(view)) {
        stats.rtcp++;
        const sender = view.getUint32(4);
        options.onDatagram?.(msg, sender);
        const leg = legs.get(sender);
        if (leg) leg.stream.stats.rtcp++;
        return;
      }
      if (!rtp.isRtp(view)) {
        stats.malformed++;
        options.onDatagram?.(msg, undefined);
        return;
      }
      const header = parseRtpHeader(msg);
      if (header === undefined) {
        stats.malformed++;
        options.onDatagram?.(msg, undefined);
        return;
      }
      const ssrc = header.ssrc;
      if (!replayed) options.onDatagram?.(msg, ssrc);
      const pt = header.payloadType;
      const codec = resolvePayloadType(pt, payloadTypes);
      let leg = legs.get(ssrc);
      if (!codec && !leg) {
        if (!guesser.observe(pt, ssrc, header.sequenceNumber, header.timestamp, msg.subarray(header.payloadStart, header.payloadEnd), [Buffer.from(msg), rinfo])) stats.unknownPayloadType++;
        return;
      }
      if (!codec) stats.unknownPayloadType++;
      if (!leg) {
        if (codec!.kind !== 'audio') {
          stats.nonAudioBeforeLeg++;
          return;
        }
        if (legs.size >= maxLegs) {
          stats.refusedLegs++;
          warnRefused();
          return;
        }
        leg = startLeg(ssrc, codec!, rinfo);
      }
      const s = leg.stream.stats;
      const seq = leg.ext.extend(header.sequenceNumber);
      const ts = header.timestamp;
      let payload: Uint8Array | undefined;
      let samples = 0;
      if (codec?.kind === 'dtmf') s.dtmf++;
      else if (codec?.kind === 'cn') s.cn++;
      else if (!codec || pt !== leg.payloadType) s.otherPayloadType++;
      else {
        // A copy: the datagram's buffer belongs to the socket's pool.
        payload = new Uint8Array(msg.subarray(header.payloadStart, header.payloadEnd));
        samples = leg.stream.codec.samplesOf(payload);
      }
      leg.stream.push({ seq, timestamp: ts, payload, samples });
    };

    socket.on('error', (err) => {
      if (closed) return;
      closed = true;
      for (const l of legs.values()) l.stream.stop(err);
      subscriber.error(new AudioSourceError('source_error', `RTP socket failed: ${err.message}`, { cause: err }));
    });
    const bind = (): void => {
      try {
        socket.bind({ address: options.host ?? '127.0.0.1', port: options.port ?? 0 }, () => {
          if (options.recvBufferSize) socket.setRecvBufferSize(options.recvBufferSize);
          options.onListening?.(socket.address());
        });
      } catch (err) {
        subscriber.error(new InputError('invalid_argument', `cannot bind RTP socket: ${(err as Error).message}`));
      }
    };
    loadRtpPackets().then(
      (module) => {
        if (closed) return;
        rtp = module;
        socket.on('message', onMessage);
        bind();
      },
      (err: unknown) => {
        if (closed) return;
        subscriber.error(new AudioSourceError('source_error', `cannot load rtp.js: ${(err as Error).message}`, { cause: err }));
      },
    );

    return () => {
      closed = true;
      for (const l of [...legs.values()]) l.stream.stop();
      legs.clear();
      frameClock?.stop();
      guesser.stop();
      try {
        socket.close();
      } catch {
        /* already closed */
      }
    };
  });
}
