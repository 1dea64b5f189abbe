// The RTP of one SIP call: a UDP port per negotiated stream, each stream's packets through the
// jitter buffer and the live audio rtpSource's legs use (PlayoutStream), joined across an SSRC
// change or a hold, and for a SIPREC call the two participants' streams as two channels.
import type dgram from 'node:dgram';
import type { Subscription } from 'rxjs';
import type { AudioObservable } from '../../audio/meta.js';
import { bytesPerFrame, type RawAudioFormat } from '../../schema/audio.js';
import { LiveAudio, type LiveGrouping } from '../LiveAudio.js';
import { resolvePayloadType, routeFormat, type PayloadTypeSpec, type RtpCodec } from '../payloadTypes.js';
import { PlayoutStream, type StreamStats } from '../PlayoutStream.js';
import { createRtpHeader, isRtcpDatagram, isRtpDatagram, parseRtpHeader } from '../rtpHeader.js';
import { SequenceExtender } from '../rtpSequence.js';
import { legAudio } from '../RtpLegs.js';
import { TrackInterleaver } from '../TrackInterleaver.js';
import type { SchedulerLike } from 'rxjs';

/** What the streams of a call are given by the server. */
export interface SipMediaSettings {
  readonly scheduler: SchedulerLike;
  readonly playoutDelayMs: number | undefined;
  readonly maxHeldPackets: number | undefined;
  readonly frameMs: number;
  readonly ffmpegPath: string | undefined;
  /** Datagrams from other senders are dropped (the server's allow-list). */
  readonly allowed: ((remote: { readonly address: string; readonly port: number }) => boolean) | undefined;
}

/** Counters of one RTP stream of a call beyond the jitter buffer's. */
export interface SipStreamCounters {
  datagrams: number;
  malformed: number;
  disallowedSource: number;
  /** Times the sender changed its SSRC (the stream goes on, numbering joined). */
  ssrcChanges: number;
}

const header = createRtpHeader();

/** One negotiated stream: its socket, its jitter buffer, the joins across SSRC changes and holds. */
export class SipRtpStream {
  readonly playout: PlayoutStream;
  /** The stream's counters, kept on the jitter buffer's own object (one live object per stream). */
  readonly counters: StreamStats & SipStreamCounters;
  /** Scheduler time of the last datagram (or of the answer, before any). */
  lastArrival: number;
  /** The sender sends nothing now (hold, inactive): no RTP timeout. */
  held = false;
  private ssrc: number | undefined;
  private readonly ext = new SequenceExtender();
  private seqOffset = 0;
  private tsOffset = 0;
  private lastSeq = -1;
  private nextTs = 0;
  private rebase = false;
  private readonly bytesPerTick: number;
  private payloadTypes: Readonly<Record<number, PayloadTypeSpec>>;

  constructor(
    readonly socket: dgram.Socket,
    readonly port: number,
    readonly codec: RtpCodec,
    payloadTypes: Readonly<Record<number, PayloadTypeSpec>>,
    private readonly settings: SipMediaSettings,
    grouped: boolean,
  ) {
    this.payloadTypes = payloadTypes;
    this.lastArrival = settings.scheduler.now();
    this.bytesPerTick = codec.route.kind === 'raw' ? bytesPerFrame(codec.route.format) : 0;
    this.playout = new PlayoutStream(codec, {
      scheduler: settings.scheduler,
      ...(settings.playoutDelayMs !== undefined ? { playoutDelayMs: settings.playoutDelayMs } : {}),
      ...(settings.maxHeldPackets !== undefined ? { maxHeldPackets: settings.maxHeldPackets } : {}),
      // The call's RTP timeout is the server's (it knows about holds); the stream never idles out.
      idleTimeoutMs: 0,
      ...(grouped && settings.frameMs > 0 ? { grouping: { frameMs: settings.frameMs, scheduler: settings.scheduler } } : {}),
    });
    this.counters = Object.assign(this.playout.stats, { datagrams: 0, malformed: 0, disallowedSource: 0, ssrcChanges: 0 });
    socket.on('message', (msg: Buffer, rinfo: dgram.RemoteInfo) => this.take(msg, rinfo));
  }

  get stats(): StreamStats & SipStreamCounters {
    return this.counters;
  }

  /** The stream's audio as the session takes it (decoded by ffmpeg for G.722). */
  audio(): AudioObservable {
    return legAudio(this.playout, this.codec, { ffmpegPath: this.settings.ffmpegPath });
  }

  /** The sender stopped (hold) or starts again (unhold): after a hold the numbering is joined, so the held time is not in the audio. */
  setHeld(held: boolean, payloadTypes?: Readonly<Record<number, PayloadTypeSpec>>): void {
    if (payloadTypes) this.payloadTypes = payloadTypes;
    if (this.held && !held) {
      this.rebase = true;
      this.lastArrival = this.settings.scheduler.now();
    }
    this.held = held;
  }

  private take(msg: Buffer, rinfo: dgram.RemoteInfo): void {
    const c = this.counters;
    c.datagrams++;
    if (this.settings.allowed && !this.settings.allowed(rinfo)) {
      c.disallowedSource++;
      return;
    }
    if (msg.length < 12) {
      c.malformed++;
      return;
    }
    if (isRtcpDatagram(msg)) {
      this.playout.stats.rtcp++;
      return;
    }
    if (!isRtpDatagram(msg) || parseRtpHeader(msg, header) === undefined) {
      c.malformed++;
      return;
    }
    this.lastArrival = this.settings.scheduler.now();
    if (header.ssrc !== this.ssrc) {
      if (this.ssrc !== undefined) c.ssrcChanges++;
      this.ssrc = header.ssrc;
      if (this.lastSeq >= 0) this.rebase = true;
    }
    if (this.rebase) {
      // A new SSRC, or the first packet after a hold: its numbering continues the stream's.
      this.rebase = false;
      this.ext.reset();
      this.seqOffset = this.lastSeq + 1 - this.ext.extend(header.sequenceNumber);
      this.ext.reset();
      this.tsOffset = (this.nextTs - header.timestamp) >>> 0;
    }
    const seq = this.ext.extend(header.sequenceNumber) + this.seqOffset;
    const ts = (header.timestamp + this.tsOffset) >>> 0;
    const pt = header.payloadType;
    if (pt === this.codec.payloadType) {
      const start = header.payloadStart;
      const end = header.payloadEnd;
      const samples = this.bytesPerTick > 0 ? Math.floor((end - start) / this.bytesPerTick) : this.codec.samplesOf(msg.subarray(start, end));
      if (seq > this.lastSeq) {
        this.lastSeq = seq;
        this.nextTs = (ts + samples) >>> 0;
      }
      this.playout.pushPayload(seq, ts, msg, start, end, samples);
      return;
    }
    const other = this.payloadTypes[pt] ? resolvePayloadType(pt, this.payloadTypes) : undefined;
    const s = this.playout.stats;
    if (other?.kind === 'dtmf') s.dtmf++;
    else if (other?.kind === 'cn') s.cn++;
    else s.otherPayloadType++;
    if (seq > this.lastSeq) this.lastSeq = seq;
    // Takes its sequence slot, plays nothing.
    this.playout.push({ seq, timestamp: ts, payload: undefined, samples: 0 });
  }

  /** The call ended: release what is held, complete the audio (or fail it with `error`), close the socket. */
  close(error?: unknown): void {
    if (error === undefined) this.playout.end();
    else this.playout.stop(error);
    try {
      this.socket.close();
    } catch {
      /* closed already */
    }
  }
}

/** The audio of a call: one stream as it is, or two as the channels of one. */
export interface CallAudio {
  readonly audio$: AudioObservable;
  readonly format: RawAudioFormat;
  /** Stop feeding (the streams ended or were closed). */
  readonly release: () => void;
}

/** One stream's audio, as the session takes it. */
export function monoAudio(stream: SipRtpStream): CallAudio {
  return { audio$: stream.audio(), format: routeFormat(stream.codec.route) as RawAudioFormat, release: () => undefined };
}

/**
 * Two streams as the two channels of one audio (a SIPREC call's participants): both decoded to
 * the same format (the server picks one codec for both), sample i of each side by side, the
 * quiet one padded after `maxSkewMs` (default 500).
 */
export function stereoAudio(a: SipRtpStream, b: SipRtpStream, grouping: LiveGrouping | undefined, maxSkewMs = 500): CallAudio {
  const mono = routeFormat(a.codec.route) as RawAudioFormat;
  const format: RawAudioFormat = { ...mono, num_channels: 2 };
  const live = new LiveAudio(format, grouping);
  const sampleBytes = bytesPerFrame(mono) as 1 | 2;
  const silence = mono.audio_format === 'mulaw' ? 0xff : mono.audio_format === 'alaw' ? 0xd5 : 0;
  const interleaver = new TrackInterleaver(silence, Math.round((mono.sample_rate * maxSkewMs) / 1000), sampleBytes);
  let open = 2;
  let failed = false;
  const subs: Subscription[] = [];
  const track = (stream: SipRtpStream, i: 0 | 1): Subscription =>
    stream.audio().subscribe({
      next: (chunk) => {
        const out = interleaver.push(i, chunk);
        if (out.byteLength > 0) live.push(out);
      },
      error: (err: unknown) => {
        if (failed) return;
        failed = true;
        live.fail(err);
      },
      complete: () => {
        if (--open > 0 || failed) return;
        const rest = interleaver.end();
        if (rest.byteLength > 0) live.push(rest);
        live.end();
      },
    });
  subs.push(track(a, 0), track(b, 1));
  return { audio$: live.audio$, format, release: () => subs.forEach((s) => s.unsubscribe()) };
}

