// One provider connection of the media-stream server: its messages (`start`, `media`, `stop`)
// read in the preset's field names, one jitter-buffered stream per track, and the calls it emits.
import type { WebSocket } from 'ws';
import type { AudioObservable } from '../audio/meta.js';
import { rawDataText } from '../internal/wsData.js';
import type { RawAudioFormat } from '../schema/audio.js';
import type { LiveGrouping } from './LiveAudio.js';
import { hasFastMediaPath, matchMediaMessage } from './mediaMessage.js';
import { TrackMixer } from './TrackMixer.js';
import { detectPreset, encodingLaw, MEDIA_STREAM_PRESETS, normalizeTrack, readField, readNumber, type MediaStreamPreset, type MediaStreamPresetName } from './mediaStreamPresets.js';
import { resolvePayloadType } from './payloadTypes.js';
import { PlayoutStream, type StreamStats } from './PlayoutStream.js';
import type { SchedulerLike } from 'rxjs';

/** A media-stream track: the caller's audio (`inbound`) or the audio sent to the caller (`outbound`). */
export type MediaTrack = 'inbound' | 'outbound';

/** One call (or one track of it) from a media stream. */
export interface MediaStreamCall {
  /** `<streamId>` (interleaved) or `<streamId>:<track>`. */
  readonly id: string;
  readonly streamId: string;
  /** The provider's call identifier (`callSid`, `call_control_id`), when the start message has one. */
  readonly callId: string | undefined;
  readonly preset: MediaStreamPresetName;
  /** The track, or `both` when interleaved (channel 1 inbound, channel 2 outbound). */
  readonly track: MediaTrack | 'both';
  /** mulaw (or alaw) at 8000 Hz, 1 channel, or 2 when interleaved. */
  readonly format: RawAudioFormat;
  readonly audio$: AudioObservable;
  /** Counters per track (the jitter buffer's, on chunk numbers). */
  readonly stats: Readonly<Partial<Record<MediaTrack, StreamStats>>>;
  readonly customParameters: unknown;
  /** The start message as received. */
  readonly start: unknown;
}

/** What every connection of one server shares: its settings, counters and outlets. */
export interface ConnectionContext {
  /** The preset the options fix, or undefined to detect it from each `start`. */
  readonly fixedPreset: MediaStreamPreset | undefined;
  readonly wanted: ReadonlySet<MediaTrack>;
  readonly interleaved: boolean;
  readonly maxSkewMs: number;
  readonly playoutDelayMs: number | undefined;
  readonly scheduler: SchedulerLike;
  readonly grouping: LiveGrouping | undefined;
  /** Counters the connection updates: messages, malformed, ignored, calls, oversized. */
  readonly stats: { messages: number; malformed: number; ignored: number; calls: number; oversized: number };
  /** Count and report one unusable message. */
  malformed(reason: string, raw: string): void;
  /** Decode base64 into the server's scratch buffer: where and how many bytes (the object and the bytes are valid until the next call). */
  decode(payload: string): DecodedPayload;
  /** A call is ready. */
  emit(call: MediaStreamCall): void;
}

/** A payload decoded into a scratch buffer: its first `bytes` bytes. */
export interface DecodedPayload {
  buf: Buffer;
  bytes: number;
}

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

interface TrackState {
  readonly stream: PlayoutStream;
  samples: number;
  chunks: number;
}

/**
 * The life of one connection: reads its messages until `stop` or the close, and ends the
 * audio of every call it emitted either way (`end()`, called by the server on shutdown too).
 */
export class MediaStreamConnection {
  private preset: MediaStreamPreset | undefined;
  private streamId: string | undefined;
  private law: 'mulaw' | 'alaw' = 'mulaw';
  private startMsg: unknown;
  private readonly tracks = new Map<MediaTrack, TrackState>();
  private mixer: TrackMixer | undefined;
  private ended = false;

  constructor(
    private readonly ws: WebSocket,
    private readonly ctx: ConnectionContext,
    /** Told once when the connection's calls have ended. */
    private readonly onEnd: () => void,
  ) {
    this.preset = ctx.fixedPreset;
    ws.on('message', (data, isBinary) => this.onMessage(data as Buffer, isBinary));
    ws.on('close', () => this.end());
    ws.on('error', (err: Error & { code?: string }) => {
      if (err.code === 'WS_ERR_UNSUPPORTED_MESSAGE_LENGTH') ctx.stats.oversized++;
      this.end();
    });
  }

  /** End every call's audio (the stream stopped, the connection closed, the server shut down). */
  end(): void {
    if (this.ended) return;
    this.ended = true;
    for (const t of this.tracks.values()) t.stream.end();
    if (this.mixer && this.tracks.size === 0) this.mixer.end();
    this.onEnd();
  }

  /** The counters of its tracks. */
  *trackStats(): Iterable<StreamStats> {
    for (const t of this.tracks.values()) yield t.stream.stats;
  }

  /** Close the connection (`code`, `reason`) and end its calls' audio: the service shuts down. */
  close(code: number, reason: string): void {
    this.ws.close(code, reason);
    setTimeout(() => this.ws.terminate(), 2_000).unref();
    this.end();
  }

  private onMessage(data: Buffer | ArrayBuffer | Buffer[], isBinary: boolean): void {
    const ctx = this.ctx;
    ctx.stats.messages++;
    if (isBinary) return ctx.malformed('binary frame', '(binary)');
    const raw = rawDataText(data);
    try {
      // The providers' media message in their exact layout: read without JSON.parse.
      if (this.streamId !== undefined && hasFastMediaPath(this.preset)) {
        const fast = matchMediaMessage(raw);
        // The pattern checked the payload's alphabet already.
        if (fast) return this.takeMedia(fast.track, fast.payload, Number(fast.chunk), Number(fast.timestamp), raw, true);
      }
      let msg: unknown;
      try {
        msg = JSON.parse(raw);
      } catch {
        return ctx.malformed('not JSON', raw);
      }
      const event = readField(msg, (this.preset ?? MEDIA_STREAM_PRESETS.twilio).event);
      if (typeof event !== 'string') return ctx.malformed('no event field', raw);
      if (event === 'start') this.onStart(msg, raw);
      else if (event === 'media') this.onMedia(msg, raw);
      else if (event === 'stop') this.end();
      else ctx.stats.ignored++;
    } catch (err) {
      ctx.malformed(`could not handle the message: ${(err as Error).message}`, raw);
    }
  }

  private format(channels: number): RawAudioFormat {
    return { audio_format: this.law, sample_rate: 8000, num_channels: channels };
  }

  private emitCall(track: MediaTrack | 'both', audio$: AudioObservable, trackStats: Partial<Record<MediaTrack, StreamStats>>, channels: number): void {
    const preset = this.preset!;
    const streamId = this.streamId!;
    this.ctx.stats.calls++;
    this.ctx.emit({
      id: track === 'both' ? streamId : `${streamId}:${track}`,
      streamId,
      callId: readField(this.startMsg, preset.callId) as string | undefined,
      preset: preset.name,
      track,
      format: this.format(channels),
      audio$,
      stats: trackStats,
      customParameters: readField(this.startMsg, preset.customParameters),
      start: this.startMsg,
    });
  }

  private trackState(track: MediaTrack): TrackState {
    let t = this.tracks.get(track);
    if (t) return t;
    const ctx = this.ctx;
    const stream = new PlayoutStream(resolvePayloadType(this.law === 'mulaw' ? 0 : 8)!, {
      scheduler: ctx.scheduler,
      idleTimeoutMs: 0,
      ...(ctx.playoutDelayMs !== undefined ? { playoutDelayMs: ctx.playoutDelayMs } : {}),
      // Interleaved, the two-channel stream is grouped, not the tracks that feed it.
      ...(ctx.grouping && !this.mixer ? { grouping: ctx.grouping } : {}),
    });
    t = { stream, samples: 0, chunks: 0 };
    this.tracks.set(track, t);
    if (this.mixer) this.mixer.add(track === 'inbound' ? 0 : 1, stream.live.audio$);
    else this.emitCall(track, stream.live.audio$, { [track]: stream.stats }, 1);
    return t;
  }

  private onStart(msg: unknown, raw: string): void {
    const ctx = this.ctx;
    const preset = ctx.fixedPreset ?? detectPreset(msg);
    this.preset = preset;
    if (!preset) return ctx.malformed('start message names no stream (no streamSid / stream_id)', raw);
    const id = readField(msg, preset.streamId);
    if (typeof id !== 'string' || id === '') return ctx.malformed(`start message without ${preset.streamId.join(' or ')}`, raw);
    const law = encodingLaw(readField(msg, preset.encoding));
    const rate = readNumber(msg, preset.sampleRate);
    const channels = readNumber(msg, preset.channels);
    if (!law || (rate !== undefined && rate !== 8000) || (channels !== undefined && channels !== 1)) {
      return ctx.malformed(`unsupported media format ${JSON.stringify(readField(msg, preset.encoding))}/${String(rate)}/${String(channels)} (G.711 8000 Hz mono only)`, raw);
    }
    if (this.streamId !== undefined) return ctx.malformed('a second start message on one connection', raw);
    this.streamId = id;
    this.law = law;
    this.startMsg = msg;
    if (ctx.interleaved) {
      const mixer = new TrackMixer(this.format(2), ctx.maxSkewMs, ctx.grouping);
      this.mixer = mixer;
      const trackStats: Partial<Record<MediaTrack, StreamStats>> = {};
      this.emitCall('both', mixer.audio$, trackStats, 2);
      for (const t of ctx.wanted) trackStats[t] = this.trackState(t).stream.stats;
    }
  }

  private onMedia(msg: unknown, raw: string): void {
    const preset = this.preset;
    if (!preset || this.streamId === undefined) return this.ctx.malformed('media before start', raw);
    this.takeMedia(readField(msg, preset.track), readField(msg, preset.payload), readNumber(msg, preset.chunk), readNumber(msg, preset.timestamp), raw);
  }

  /** One media message's fields, however they were read. */
  private takeMedia(trackField: unknown, payload: unknown, chunk: number | undefined, ms: number | undefined, raw: string, alphabetChecked = false): void {
    const ctx = this.ctx;
    const track = normalizeTrack(trackField);
    if (!track) return ctx.malformed(`unknown track ${JSON.stringify(trackField)}`, raw);
    if (!ctx.wanted.has(track)) {
      ctx.stats.ignored++;
      return;
    }
    if (typeof payload !== 'string' || payload.length % 4 !== 0 || (!alphabetChecked && !BASE64.test(payload))) return ctx.malformed('media without a base64 payload', raw);
    const decoded = ctx.decode(payload);
    const n = decoded.bytes;
    if (n === 0) return ctx.malformed('media with an empty payload', raw);
    const t = this.trackState(track);
    t.chunks++;
    // Borrowed from the server's scratch buffer: the stream copies it (into the frame, or into
    // a payload of its own when it must wait behind a gap) before this returns.
    t.stream.pushPayload(chunk ?? t.chunks, (ms !== undefined ? Math.round(ms * 8) : t.samples) >>> 0, decoded.buf, 0, n, n);
    t.samples += n;
  }
}
