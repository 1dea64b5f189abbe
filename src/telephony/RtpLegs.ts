// The datagram path of `rtpSource`: each datagram read in place and sent to its leg by SSRC
// (RTCP and non-audio payload types set aside and counted), legs started on their first audio
// packet and forgotten when they end, bounded by `maxLegs` here or, across workers, by the
// primary's place. The socket, the options' checks and the warnings are rtpSource.ts's.
import type dgram from 'node:dgram';
import type { SchedulerLike } from 'rxjs';
import { runFfmpeg } from '../audio/ffmpegProcess.js';
import { withAudioMeta, type AudioObservable } from '../audio/meta.js';
import { bytesPerFrame, type AudioFormat } from '../schema/audio.js';
import type { WorkerHandle } from './callWorker.js';
import type { PayloadTypeGuesser } from './PayloadTypeGuesser.js';
import { resolvePayloadType, routeFormat, type PayloadTypeSpec, type RtpCodec } from './payloadTypes.js';
import { PlayoutStream, type StreamStats } from './PlayoutStream.js';
import { createRtpHeader, isRtcpDatagram, isRtpDatagram, parseRtpHeader } from './rtpHeader.js';
import { SequenceExtender } from './rtpSequence.js';
import { StreamTotals } from './streamTotals.js';

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
  /** Audio packets of a new SSRC dropped because the service drains (`lifecycle`): it takes no new call. */
  refusedDraining: number;
}

/** Fresh {@link RtpSourceStats}, every counter at zero; pass it as `stats` and read it while the socket runs. */
export function createRtpSourceStats(): RtpSourceStats {
  return { datagrams: 0, rtcp: 0, malformed: 0, unknownPayloadType: 0, nonAudioBeforeLeg: 0, legs: 0, refusedLegs: 0, disallowedSource: 0, refusedDraining: 0 };
}

/** What the datagram path takes of `rtpSource`'s options (checked there). */
export interface RtpLegsSettings {
  readonly playoutDelayMs?: number | undefined;
  readonly idleTimeoutMs?: number | undefined;
  readonly maxHeldPackets?: number | undefined;
  readonly ffmpegPath?: string | undefined;
  readonly onDatagram?: (bytes: Buffer, ssrc: number | undefined) => void;
}

/** What the datagram path is given by the source that owns it. */
export interface RtpLegsContext {
  readonly settings: RtpLegsSettings;
  readonly stats: RtpSourceStats;
  readonly scheduler: SchedulerLike;
  /** Frames of audio, ms; 0: each packet as it is released. */
  readonly frameMs: number;
  readonly maxLegs: number;
  /** The worker's handle under `callWorkers`: then a new leg waits for the primary's place. */
  readonly handle: WorkerHandle | undefined;
  /** A dynamic payload type nobody mapped is shown to it (it holds the datagram while it decides). */
  readonly guesser: PayloadTypeGuesser<[Buffer, dgram.RemoteInfo]>;
  /** Said once, the first time a leg is refused. */
  readonly warnRefused: () => void;
  /** Said once, the first time a new leg is refused because the service drains. */
  readonly warnDraining: () => void;
  /** Told when a leg ended (the service's drain may be complete). */
  readonly changed: () => void;
  /** A leg started. */
  readonly emit: (leg: CallLeg) => void;
}

/** New SSRCs waiting at once for the primary's answer (across workers); more are refused. */
const MAX_PENDING_LEGS = 256;
/** Datagrams kept per SSRC while it waits (a round trip to the primary is well under a packet's 20 ms). */
const MAX_PENDING_DATAGRAMS = 16;

/** One running leg, as the datagram path finds it by SSRC. */
interface Leg {
  readonly stream: PlayoutStream;
  readonly ext: SequenceExtender;
  readonly payloadType: number;
  readonly codec: RtpCodec;
  /** Bytes per clock tick of a raw codec (its samples are its length over this); 0: ask the codec. */
  readonly bytesPerTick: number;
}

/** A stream's audio as the session takes it: the live audio itself, or ffmpeg's decoding of it (G.722, L16 at other rates). */
export function legAudio(stream: PlayoutStream, codec: RtpCodec, settings: Pick<RtpLegsSettings, 'ffmpegPath'>): AudioObservable {
  const route = codec.route;
  if (route.kind !== 'ffmpeg') return stream.live.audio$;
  const decoded = runFfmpeg({
    ...(settings.ffmpegPath !== undefined ? { ffmpegPath: settings.ffmpegPath } : {}),
    inputArgs: route.inputArgs,
    outputArgs: ['-f', route.format.audio_format, '-ar', String(route.format.sample_rate), '-ac', String(route.format.num_channels)],
    input: { kind: 'observable', source: stream.live.audio$ },
    flow: undefined,
  });
  return withAudioMeta(decoded, { format: route.format });
}

/** The legs of one socket, and the path each datagram takes to its leg. */
export class RtpLegs {
  private readonly legs = new Map<number, Leg>();
  /** Every datagram's header is read into this one object. */
  private readonly header = createRtpHeader();
  /** Across workers, a new SSRC waits for the primary's place under `maxLegs`; its datagrams meanwhile (copies). */
  private readonly pending = new Map<number, Buffer[]>();
  /** SSRCs whose place the primary granted, while their first datagrams are taken. */
  private readonly admitted = new Set<number>();
  /** Legs started while their held datagrams are taken: their id and first sequence number, told to the primary after. */
  private readonly marks = new Map<number, { readonly id: string; readonly firstSeq: number }>();
  private closed = false;
  /** False once the service drains: a new SSRC is refused (counted, told once); the legs running go on. */
  private accepting = true;
  /** The packet counters of every leg this socket ever ran. */
  readonly totals = new StreamTotals();

  constructor(
    private readonly ctx: RtpLegsContext,
    /** The payload types known now (`payloadTypes`, and those the guesser mapped since). */
    public payloadTypes: Readonly<Record<number, PayloadTypeSpec>>,
  ) {}

  /** One datagram past the source filter: RTCP counted, RTP to its leg (`replayed`: held a while, already told to `onDatagram`). */
  take(msg: Buffer, rinfo: dgram.RemoteInfo, replayed = false): void {
    const { stats, settings } = this.ctx;
    const header = this.header;
    if (msg.length < 8) {
      stats.malformed++;
      settings.onDatagram?.(msg, undefined);
      return;
    }
    // RTCP first: a marker bit plus payload type 72-76 looks like RTP otherwise (RFC 5761).
    if (isRtcpDatagram(msg)) {
      stats.rtcp++;
      const sender = msg.readUInt32BE(4);
      settings.onDatagram?.(msg, sender);
      const leg = this.legs.get(sender);
      if (leg) leg.stream.stats.rtcp++;
      return;
    }
    if (!isRtpDatagram(msg) || parseRtpHeader(msg, header) === undefined) {
      stats.malformed++;
      settings.onDatagram?.(msg, undefined);
      return;
    }
    const ssrc = header.ssrc;
    if (!replayed) settings.onDatagram?.(msg, ssrc);
    const pt = header.payloadType;
    let leg = this.legs.get(ssrc);
    // Nearly every packet is of its leg's own payload type, whose codec the leg keeps.
    const codec = leg !== undefined && pt === leg.payloadType ? leg.codec : resolvePayloadType(pt, this.payloadTypes);
    if (!codec && !leg) {
      if (!this.ctx.guesser.observe(pt, ssrc, header.sequenceNumber, header.timestamp, msg.subarray(header.payloadStart, header.payloadEnd), [Buffer.from(msg), rinfo])) stats.unknownPayloadType++;
      return;
    }
    if (!codec) stats.unknownPayloadType++;
    if (!leg) {
      if (codec!.kind !== 'audio') {
        stats.nonAudioBeforeLeg++;
        return;
      }
      if (!this.accepting && !this.admitted.has(ssrc)) {
        stats.refusedDraining++;
        this.ctx.warnDraining();
        return;
      }
      if (this.ctx.handle !== undefined && !this.admitted.has(ssrc)) return this.admit(ssrc, msg, rinfo);
      if (this.ctx.handle === undefined && this.legs.size >= this.ctx.maxLegs) {
        stats.refusedLegs++;
        this.ctx.warnRefused();
        return;
      }
      leg = this.start(ssrc, codec!, rinfo, header.sequenceNumber);
    }
    const seq = leg.ext.extend(header.sequenceNumber);
    if (codec === leg.codec) {
      // The payload stays in the socket's buffer: the stream copies it into the frame (or, held
      // behind a gap, into a payload of its own) before this returns.
      const start = header.payloadStart;
      const end = header.payloadEnd;
      const samples = leg.bytesPerTick > 0 ? Math.floor((end - start) / leg.bytesPerTick) : codec.samplesOf(msg.subarray(start, end));
      leg.stream.pushPayload(seq, header.timestamp, msg, start, end, samples);
      return;
    }
    const s = leg.stream.stats;
    if (codec?.kind === 'dtmf') s.dtmf++;
    else if (codec?.kind === 'cn') s.cn++;
    else s.otherPayloadType++;
    // Takes its sequence slot, plays nothing.
    leg.stream.push({ seq, timestamp: header.timestamp, payload: undefined, samples: 0 });
  }

  private start(ssrc: number, codec: RtpCodec, rinfo: dgram.RemoteInfo, firstSeq: number): Leg {
    const { settings, scheduler, frameMs, handle } = this.ctx;
    const stream: PlayoutStream = new PlayoutStream(codec, {
      scheduler,
      ...(settings.playoutDelayMs !== undefined ? { playoutDelayMs: settings.playoutDelayMs } : {}),
      ...(settings.idleTimeoutMs !== undefined ? { idleTimeoutMs: settings.idleTimeoutMs } : {}),
      ...(settings.maxHeldPackets !== undefined ? { maxHeldPackets: settings.maxHeldPackets } : {}),
      ...(frameMs > 0 ? { grouping: { frameMs, scheduler } } : {}),
      // A new packet of this SSRC after the end is a new leg (a new call reusing the SSRC).
      onEnd: () => {
        this.totals.add(stream.stats);
        if (this.legs.get(ssrc)?.stream !== stream) return;
        this.legs.delete(ssrc);
        handle?.give('legs');
        this.ctx.changed();
      },
    });
    const leg: Leg = {
      stream,
      ext: new SequenceExtender(),
      payloadType: codec.payloadType,
      codec,
      bytesPerTick: codec.route.kind === 'raw' ? bytesPerFrame(codec.route.format) : 0,
    };
    this.legs.set(ssrc, leg);
    this.ctx.stats.legs++;
    const id = `rtp-${ssrc.toString(16).padStart(8, '0')}`;
    this.ctx.emit({
      id,
      ssrc,
      payloadType: codec.payloadType,
      codec,
      format: routeFormat(codec.route),
      audio$: legAudio(stream, codec, settings),
      stats: stream.stats,
      remote: { address: rinfo.address, port: rinfo.port },
    });
    this.marks.set(ssrc, { id, firstSeq });
    return leg;
  }

  /** Under `callWorkers`: ask the primary for a place; the SSRC's datagrams wait (bounded) for the answer. */
  private admit(ssrc: number, msg: Buffer, rinfo: dgram.RemoteInfo): void {
    const { stats, maxLegs, warnRefused } = this.ctx;
    const handle = this.ctx.handle!;
    const waiting = this.pending.get(ssrc);
    if (waiting) {
      if (waiting.length < MAX_PENDING_DATAGRAMS) waiting.push(Buffer.from(msg));
      else stats.refusedLegs++;
      return;
    }
    if (handle.isFull('legs') || this.pending.size >= MAX_PENDING_LEGS) {
      stats.refusedLegs++;
      warnRefused();
      return;
    }
    this.pending.set(ssrc, [Buffer.from(msg)]);
    void handle.take('legs', maxLegs).then((ok) => {
      const datagrams = this.pending.get(ssrc) ?? [];
      this.pending.delete(ssrc);
      this.ctx.changed();
      if (this.closed) {
        if (ok) handle.give('legs');
        return;
      }
      if (!ok) {
        stats.refusedLegs += datagrams.length;
        warnRefused();
        return;
      }
      this.admitted.add(ssrc);
      for (const d of datagrams) this.take(d, rinfo, true);
      this.admitted.delete(ssrc);
      // Where this leg's sequence numbers start and how far the counters already sent reach (every
      // datagram held meanwhile was counted when it came): a leg that goes on after this worker
      // dies tells the primary what fell between, by its numbers.
      const mark = this.marks.get(ssrc);
      const leg = this.legs.get(ssrc);
      this.marks.delete(ssrc);
      if (mark && leg) handle.markCall(mark.id, mark.firstSeq, () => (leg.ext.highestSeen ?? mark.firstSeq) & 0xffff);
    });
  }

  /** Legs running, and new SSRCs waiting for the primary's place. */
  get inFlight(): number {
    return this.legs.size + this.pending.size;
  }

  /** The counters of the legs running now. */
  *liveStats(): Iterable<StreamStats> {
    for (const l of this.legs.values()) yield l.stream.stats;
  }

  /** The service drains: a new SSRC is refused from now on; the legs running go on. */
  stopAccepting(): void {
    this.accepting = false;
  }

  /** The socket failed (`err`) or the subscriber left: every leg's audio ends (errors with `err`). */
  stop(err?: Error): void {
    this.closed = true;
    for (const l of [...this.legs.values()]) l.stream.stop(err);
    if (err === undefined) this.legs.clear();
  }
}
