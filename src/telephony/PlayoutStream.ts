// Drives one stream's jitter buffer on the process's timer wheel (an RxJS scheduler underneath,
// so tests run on virtual time): its deadlines and idle timeout. Turns playouts into the codec's bytes.
import { asyncScheduler, type SchedulerLike } from 'rxjs';
import type { AudioChunk } from '../audio/meta.js';
import { JitterBuffer, type JitterPacket, type JitterStats, type Playout } from './JitterBuffer.js';
import { LiveAudio, type LiveGrouping } from './LiveAudio.js';
import { OggOpusWriter } from './oggOpus.js';
import { routeFormat, type RtpCodec } from './payloadTypes.js';
import { TimerWheel, type WheelTarget } from '../internal/timerWheel.js';

/** Counters of one stream (a call leg or a media-stream track), updated in place. */
export interface StreamStats extends JitterStats {
  /** DTMF (telephone-event) packets dropped. */
  dtmf: number;
  /** Comfort-noise packets dropped. */
  cn: number;
  /** RTCP packets from this stream's SSRC, ignored. */
  rtcp: number;
  /** Packets of another payload type than the stream's codec, dropped. */
  otherPayloadType: number;
  /** Bytes released in the codec's encoding, silence fills included. */
  bytesOut: number;
  /** Of which silence fills. */
  fillBytes: number;
  /** Interarrival jitter now (RFC 3550 §6.4.1: the smoothed variation of transit time between packets), ms. */
  jitterMs: number;
  /** The sum of `jitterMs` after each packet, and how many packets measured it: their ratio is the mean jitter (running sums, as rtpengine reports them). */
  jitterMsSum: number;
  jitterSamples: number;
}

export function createStreamStats(): StreamStats {
  // One literal, not a spread of createJitterStats(): every stream's counters then share one
  // hidden class, and the per-packet `received++` / `bytesOut +=` stay monomorphic (spread
  // clones made the sites megamorphic: a stub-cache lookup per packet at a few hundred legs).
  return { received: 0, reordered: 0, duplicated: 0, lost: 0, late: 0, resyncs: 0, dtmf: 0, cn: 0, rtcp: 0, otherPayloadType: 0, bytesOut: 0, fillBytes: 0, jitterMs: 0, jitterMsSum: 0, jitterSamples: 0 };
}

export interface PlayoutStreamOptions {
  /** Longest wait for a missing packet, ms (default 60). */
  readonly playoutDelayMs?: number | undefined;
  /** The stream ends after this long without a packet, ms (default 5000; 0 or Infinity: never). */
  readonly idleTimeoutMs?: number | undefined;
  readonly maxHeldPackets?: number | undefined;
  /** Where time comes from (default `asyncScheduler`). */
  readonly scheduler?: SchedulerLike | undefined;
  /** Called once when the stream has ended (idle, `end()` or `stop()`). */
  readonly onEnd?: (() => void) | undefined;
  /** Group the released chunks into frames (raw routes only; see `LiveAudio`). */
  readonly grouping?: LiveGrouping | undefined;
}

/** The wheel token of the idle check; jitter deadlines count up from 0. */
const IDLE = -1;
/** The idle check once more, after the packets that waited while the loop was stalled. */
const IDLE_CONFIRM = -2;

/** One stream's packets in, its ordered, gap-filled encoded audio out (see {@link LiveAudio}). */
export class PlayoutStream implements WheelTarget {
  readonly stats: StreamStats = createStreamStats();
  readonly live: LiveAudio;
  private readonly buffer: JitterBuffer;
  private readonly scheduler: SchedulerLike;
  private readonly idleMs: number;
  private readonly ogg: OggOpusWriter | undefined;
  private readonly wheel: TimerWheel;
  /** The jitter deadline on the wheel, and its token (an older token is stale). */
  private deadlineAt: number | undefined;
  private deadlineNo = 0;
  private lastArrival = 0;
  private done = false;
  /** The last audio packet's timestamp and arrival, for the interarrival jitter (NaN: none yet). */
  private lastTimestamp = NaN;
  private lastTransitAt = 0;
  private readonly msPerTick: number;

  constructor(
    readonly codec: RtpCodec,
    private readonly options: PlayoutStreamOptions = {},
  ) {
    this.scheduler = options.scheduler ?? asyncScheduler;
    this.msPerTick = 1000 / codec.clockRate;
    this.idleMs = options.idleTimeoutMs ?? 5000;
    this.buffer = new JitterBuffer({
      ...(options.playoutDelayMs !== undefined ? { playoutDelayMs: options.playoutDelayMs } : {}),
      ...(options.maxHeldPackets !== undefined ? { maxHeldPackets: options.maxHeldPackets } : {}),
      maxFillSamples: Math.round((codec.clockRate * (Number.isFinite(this.idleMs) && this.idleMs > 0 ? Math.max(this.idleMs, 1000) : 5000)) / 1000),
      // The buffer counts into the stream's own counters: nothing to copy per packet.
      stats: this.stats,
    });
    // Only bytes the service takes as they are are grouped by duration (not Ogg pages, not ffmpeg's input).
    this.live = new LiveAudio(routeFormat(codec.route), codec.route.kind === 'raw' ? options.grouping : undefined);
    this.ogg = codec.route.kind === 'ogg' ? new OggOpusWriter() : undefined;
    this.wheel = TimerWheel.of(this.scheduler);
    this.lastArrival = this.scheduler.now();
    if (Number.isFinite(this.idleMs) && this.idleMs > 0) this.wheel.at(this.lastArrival + this.idleMs, this, IDLE);
  }

  get ended(): boolean {
    return this.done;
  }

  /** One packet, arrived now. */
  push(packet: JitterPacket): void {
    if (this.done) return;
    const now = this.scheduler.now();
    this.lastArrival = now;
    this.emit(this.buffer.push(packet, now));
    this.armDeadline();
  }

  /**
   * One packet of audio, arrived now, whose payload is bytes `start`–`end` of `data`, borrowed:
   * copied before this returns, straight into the live frame when it is the next packet and
   * nothing is held (nearly always), else into a payload of its own that the jitter buffer keeps.
   */
  pushPayload(seq: number, timestamp: number, data: Buffer, start: number, end: number, samples: number): void {
    if (this.done) return;
    const now = this.scheduler.now();
    this.measureJitter(timestamp, now);
    if (this.ogg === undefined) {
      const fill = this.buffer.takeNext(seq, timestamp, samples);
      if (fill >= 0) {
        this.lastArrival = now;
        if (fill > 0) this.emitFill(fill);
        this.stats.bytesOut += end - start;
        this.live.write(data, start, end);
        return;
      }
    }
    const payload = new Uint8Array(end - start);
    payload.set(data.subarray(start, end));
    this.push({ seq, timestamp, payload, samples });
  }

  /**
   * RFC 3550's interarrival jitter, from this packet's arrival and RTP timestamp against the
   * previous one's: J += (|D| − J) / 16. Timestamps are compared modulo 2^32.
   */
  private measureJitter(timestamp: number, now: number): void {
    const last = this.lastTimestamp;
    this.lastTimestamp = timestamp;
    const arrivedAfter = now - this.lastTransitAt;
    this.lastTransitAt = now;
    if (last !== last) return;
    let d = arrivedAfter - ((timestamp - last) | 0) * this.msPerTick;
    if (d < 0) d = -d;
    const s = this.stats;
    s.jitterMs += (d - s.jitterMs) / 16;
    s.jitterMsSum += s.jitterMs;
    s.jitterSamples++;
  }

  /** The sender said the stream is over: release what is held and complete. */
  end(): void {
    if (this.done) return;
    this.emit(this.buffer.flush());
    this.finish();
    this.live.end();
  }

  /** Stop without completing the audio (the source was torn down). */
  stop(error?: unknown): void {
    if (this.done) return;
    this.finish();
    if (error !== undefined) this.live.fail(error);
    else this.live.end();
  }

  private finish(): void {
    this.done = true;
    this.wheel.remove(this);
    this.options.onEnd?.();
  }

  private emit(playouts: Playout[]): void {
    for (const p of playouts) {
      let chunks: AudioChunk[];
      if (this.ogg) chunks = p.kind === 'audio' ? this.ogg.packet(p.payload) : this.ogg.gap(p.samples);
      else chunks = [p.kind === 'audio' ? p.payload : this.codec.silence(p.samples)];
      for (const c of chunks) {
        this.stats.bytesOut += c.byteLength;
        if (p.kind === 'fill') this.stats.fillBytes += c.byteLength;
        this.live.push(c);
      }
    }
  }

  private emitFill(samples: number): void {
    const c = this.codec.silence(samples);
    this.stats.bytesOut += c.byteLength;
    this.stats.fillBytes += c.byteLength;
    this.live.push(c);
  }

  private armDeadline(): void {
    const d = this.buffer.deadline;
    if (d === this.deadlineAt) return;
    this.deadlineAt = d;
    // An earlier deadline still on the wheel is stale: its token is no longer deadlineNo.
    this.deadlineNo++;
    if (d !== undefined) this.wheel.at(d, this, this.deadlineNo);
  }

  /** The wheel: a jitter deadline, or the idle check (re-armed for the remainder when packets came meanwhile). */
  onDeadline(token: number, now: number): void {
    if (this.done) return;
    if (token >= 0) {
      if (token !== this.deadlineNo) return;
      this.deadlineAt = undefined;
      this.emit(this.buffer.expire(now));
      this.armDeadline();
      return;
    }
    const quiet = now - this.lastArrival;
    if (quiet < this.idleMs) return this.wheel.at(this.lastArrival + this.idleMs, this, IDLE);
    // After a stall the event loop runs its timers before it reads the socket: look once more,
    // after the packets that waited meanwhile, before calling the stream idle.
    if (token === IDLE) return this.wheel.at(now, this, IDLE_CONFIRM);
    this.end();
  }
}
