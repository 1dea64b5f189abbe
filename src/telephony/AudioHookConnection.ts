// One AudioHook connection: its messages through the protocol's reducer (audioHookState.ts),
// the server's answers sent, the audio of both sides of the call as one live stream (external
// first), gaps filled or counted, the waits for the client bounded on the scheduler.
import type { IncomingMessage } from 'node:http';
import type { SchedulerLike, Subscription } from 'rxjs';
import type { WebSocket } from 'ws';
import type { AudioObservable } from '../audio/meta.js';
import { rawDataText } from '../internal/wsData.js';
import type { RawAudioFormat } from '../schema/audio.js';
import type { AudioHookChannel, AudioHookMedia, AudioHookOpenParameters, AudioHookParticipant } from '../schema/audioHook.js';
import {
  audioHookReducer,
  initialAudioHookState,
  type AudioHookAction,
  type AudioHookEnd,
  type AudioHookGap,
  type AudioHookInput,
  type AudioHookNotice,
  type AudioHookRules,
  type AudioHookState,
} from './audioHookState.js';
import type { AudioHookServerStats } from './audioHookServer.js';
import { LiveAudio, type LiveGrouping } from './LiveAudio.js';

/** Counters of one call, updated in place. */
export interface AudioHookCallStats {
  /** Binary messages taken as audio, and their bytes. */
  frames: number;
  bytes: number;
  /** Pauses, and their length in ms (filled or not). */
  pauses: number;
  pausedMs: number;
  /** Spans the client said it discarded, and their length in ms. */
  discards: number;
  discardedMs: number;
  /** Of the gaps, what was filled with silence, ms (the rest is left out of the session's audio). */
  filledMs: number;
}

/** One call from Genesys AudioHook: both sides of it as the channels of one audio stream. */
export interface AudioHookCall {
  /** The AudioHook session's id (`Audiohook-Session-Id`, a UUID). */
  readonly id: string;
  readonly conversationId: string;
  readonly organizationId: string;
  /** `Audiohook-Correlation-Id`, when sent. */
  readonly correlationId: string | undefined;
  /** The customer's side: `ani`, `aniName`, `dnis`. */
  readonly participant: AudioHookParticipant;
  /** The conversation's language (`open`, then each `update`), e.g. `en-US`. */
  readonly language: string | undefined;
  /** The `customConfig` of the integration, as sent in `open`. */
  readonly customConfig: unknown;
  /** The media as negotiated (what `opened` echoed). */
  readonly media: AudioHookMedia;
  /** The channels of `audio$`, in order: `external` (the customer) first. */
  readonly channels: readonly AudioHookChannel[];
  /** `mulaw` (PCMU) or `s16le` (L16) at 8000 Hz, one channel per side. */
  readonly format: RawAudioFormat;
  /** The call's audio (hot, kept until the first subscriber: see `LiveAudio`); gaps filled with silence up to `maxGapFillMs`. */
  readonly audio$: AudioObservable;
  readonly stats: AudioHookCallStats;
  /** Every pause and discarded span so far, in order. */
  readonly gaps: readonly AudioHookGap[];
  /** How the session ended, once it has. */
  readonly end: AudioHookEnd | undefined;
  /** The `open` message's parameters as received. */
  readonly open: AudioHookOpenParameters;
  /** Ask the client to pause its audio (`pause`); it answers `paused`. The time until it resumes is a gap like its own pauses. */
  pause(): void;
  /** Ask the client to resume (`resume`). */
  resume(): void;
}

/** What every connection of one server shares. */
export interface AudioHookContext {
  readonly rules: AudioHookRules;
  readonly scheduler: SchedulerLike;
  readonly grouping: LiveGrouping | undefined;
  /** How long the client is waited for (its `open`; its `close` after a disconnect; its socket's close after `closed`), ms. */
  readonly openTimeoutMs: number;
  readonly closeTimeoutMs: number;
  /** The server's counters, moved by every connection. */
  readonly stats: AudioHookServerStats;
  /** A call is ready (not for a connection probe). */
  emit(call: AudioHookCall): void;
  /** What the protocol says along the way, with the session and its call (if it has one). */
  notice(notice: AudioHookNotice, sessionId: string | undefined, call: AudioHookCall | undefined): void;
}

const CHANNEL_ORDER: readonly AudioHookChannel[] = ['external', 'internal'];

/** Count a gap in a call's or a server's counters. */
function countGap(counters: Pick<AudioHookCallStats, 'pauses' | 'pausedMs' | 'discards' | 'discardedMs' | 'filledMs'>, gap: AudioHookGap): void {
  if (gap.cause === 'paused') {
    counters.pauses++;
    counters.pausedMs += gap.durationMs;
  } else {
    counters.discards++;
    counters.discardedMs += gap.durationMs;
  }
  if (gap.filled) counters.filledMs += gap.durationMs;
}

class Call implements AudioHookCall {
  readonly stats: AudioHookCallStats = { frames: 0, bytes: 0, pauses: 0, pausedMs: 0, discards: 0, discardedMs: 0, filledMs: 0 };
  readonly gaps: AudioHookGap[] = [];
  language: string | undefined;
  end: AudioHookEnd | undefined;
  readonly channels: readonly AudioHookChannel[];
  readonly format: RawAudioFormat;
  readonly audio$: AudioObservable;

  constructor(
    readonly id: string,
    readonly open: AudioHookOpenParameters,
    readonly media: AudioHookMedia,
    readonly correlationId: string | undefined,
    readonly live: LiveAudio,
    format: RawAudioFormat,
    private readonly ask: (input: AudioHookInput) => void,
  ) {
    this.language = open.language;
    this.format = format;
    this.audio$ = live.audio$;
    this.channels = CHANNEL_ORDER.filter((c) => media.channels.includes(c));
  }

  get conversationId(): string {
    return this.open.conversationId;
  }
  get organizationId(): string {
    return this.open.organizationId;
  }
  get participant(): AudioHookParticipant {
    return this.open.participant;
  }
  get customConfig(): unknown {
    return this.open.customConfig;
  }
  pause(): void {
    this.ask({ type: 'pause' });
  }
  resume(): void {
    this.ask({ type: 'resume' });
  }
}

function header(req: IncomingMessage, name: string): string | undefined {
  const v = req.headers[name];
  return Array.isArray(v) ? v[0] : v;
}

const UUID = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/;

/** The life of one AudioHook connection, from the upgrade to the socket's close. */
export class AudioHookConnection {
  private state: AudioHookState;
  private call: Call | undefined;
  private wait: Subscription | undefined;
  /** Bytes of a sample frame of each channel, when the channels arrive in the other order (internal first). */
  private swapBytes = 0;
  private scratch: Buffer | undefined;
  private readonly correlationId: string | undefined;
  private closed = false;

  constructor(
    private readonly ws: WebSocket,
    req: IncomingMessage,
    private readonly ctx: AudioHookContext,
    /** Told once, when the socket has closed. */
    private readonly onClose: () => void,
  ) {
    const id = header(req, 'audiohook-session-id');
    this.state = initialAudioHookState(id !== undefined && UUID.test(id) ? id : undefined);
    this.correlationId = header(req, 'audiohook-correlation-id');
    ws.on('message', (data, isBinary) => this.onMessage(data as Buffer, isBinary));
    ws.on('close', () => this.onSocketClose());
    ws.on('error', (err: Error & { code?: string }) => {
      if (err.code === 'WS_ERR_UNSUPPORTED_MESSAGE_LENGTH') ctx.stats.oversized++;
      // The socket is done for (ws has sent its close, and reads no more): the session ends now,
      // not when the peer gets round to closing, and the socket goes within a second.
      this.onSocketClose();
      setTimeout(() => ws.terminate(), 1_000).unref();
    });
    this.waitForClient(ctx.openTimeoutMs);
  }

  get sessionId(): string | undefined {
    return this.state.id;
  }

  /** Opened and not ended: a session a drain asks to reconnect. */
  get live(): boolean {
    return this.state.phase === 'active' || this.state.phase === 'paused';
  }

  /** Something happens to the session from this side (a pause asked, a drain, a shutdown). */
  input(input: AudioHookInput): void {
    this.step(input);
  }

  /** The server stops: `disconnect` said if the session is live, and the socket closed now (no wait). */
  shutdown(): void {
    this.step({ type: 'disconnect', reason: 'error', info: 'the server is shutting down' });
    this.wait?.unsubscribe();
    this.ws.close(1001, 'server shutting down');
    setTimeout(() => this.ws.terminate(), 1_000).unref();
  }

  private onMessage(data: Buffer | ArrayBuffer | Buffer[], isBinary: boolean): void {
    if (isBinary) {
      const buf = Array.isArray(data) ? Buffer.concat(data) : Buffer.isBuffer(data) ? data : Buffer.from(data);
      this.step({ type: 'binary', bytes: buf.byteLength }, buf);
      return;
    }
    this.ctx.stats.messages++;
    const text = rawDataText(data);
    const bytes = Buffer.byteLength(text);
    let json: unknown;
    if (bytes <= 65_535) {
      try {
        json = JSON.parse(text);
      } catch {
        json = undefined;
      }
    }
    this.step({ type: 'text', json, bytes });
  }

  private onSocketClose(): void {
    if (this.closed) return;
    this.closed = true;
    this.wait?.unsubscribe();
    this.step({ type: 'socket-closed' });
    this.onClose();
  }

  private step(input: AudioHookInput, audio?: Buffer): void {
    const before = this.state.phase;
    const { state, actions } = audioHookReducer(this.state, input, this.ctx.rules);
    this.state = state;
    // Opened (a call, or a probe): the wait for `open` is over.
    if (before === 'awaiting-open' && state.phase === 'active') this.wait?.unsubscribe();
    for (const a of actions) this.apply(a, audio);
  }

  private apply(a: AudioHookAction, audio: Buffer | undefined): void {
    const { ctx } = this;
    switch (a.kind) {
      case 'send':
        if (this.ws.readyState === this.ws.OPEN) this.ws.send(JSON.stringify(a.message));
        if (a.message.type === 'opened' && this.state.probe) ctx.stats.probes++;
        return;
      case 'start':
        return this.start(a.open, a.media);
      case 'audio':
        return this.take(audio!);
      case 'fill': {
        const call = this.call!;
        const silence = new Uint8Array(a.samples * this.state.frameBytes);
        if (call.format.audio_format === 'mulaw') silence.fill(0xff);
        call.live.push(silence);
        return;
      }
      case 'notice':
        return this.notice(a.notice);
      case 'ignored':
        ctx.stats.ignored++;
        return;
      case 'end':
        return this.end(a.end);
      case 'await-client':
        return this.waitForClient(ctx.closeTimeoutMs);
      case 'close-socket':
        this.ws.close(1000);
        setTimeout(() => this.ws.terminate(), 1_000).unref();
        return;
    }
  }

  private start(open: AudioHookOpenParameters, media: AudioHookMedia): void {
    const l16 = media.format === 'L16';
    const format: RawAudioFormat = { audio_format: l16 ? 's16le' : 'mulaw', sample_rate: 8000, num_channels: media.channels.length };
    if (media.channels.length === 2 && media.channels[0] === 'internal') this.swapBytes = l16 ? 2 : 1;
    const live = new LiveAudio(format, this.ctx.grouping);
    this.call = new Call(this.state.id!, open, media, this.correlationId, live, format, (input) => this.step(input));
    this.ctx.stats.calls++;
    this.ctx.emit(this.call);
  }

  /** A binary frame: the call's audio, external first. */
  private take(buf: Buffer): void {
    const call = this.call;
    this.ctx.stats.audioFrames++;
    this.ctx.stats.audioBytes += buf.byteLength;
    // Opened for a probe (no call): nothing to play.
    if (!call) return;
    call.stats.frames++;
    call.stats.bytes += buf.byteLength;
    const w = this.swapBytes;
    if (w === 0) return call.live.write(buf, 0, buf.byteLength);
    if (!this.scratch || this.scratch.byteLength < buf.byteLength) this.scratch = Buffer.allocUnsafe(Math.max(buf.byteLength, 4096));
    const out = this.scratch;
    for (let i = 0; i < buf.byteLength; i += 2 * w) {
      for (let k = 0; k < w; k++) {
        out[i + k] = buf[i + w + k]!;
        out[i + w + k] = buf[i + k]!;
      }
    }
    call.live.write(out, 0, buf.byteLength);
  }

  private notice(n: AudioHookNotice): void {
    const { stats } = this.ctx;
    const call = this.call;
    const gap = n.type === 'resumed' || n.type === 'discarded' ? n.gap : undefined;
    if (gap) {
      countGap(stats, gap);
      if (call) {
        call.gaps.push(gap);
        countGap(call.stats, gap);
      }
    }
    if (n.type === 'update' && call) call.language = n.language ?? call.language;
    this.ctx.notice(n, this.state.id, call);
  }

  private end(end: AudioHookEnd): void {
    const { stats } = this.ctx;
    if (end.how === 'closed') stats.closed++;
    else if (end.how === 'disconnected') stats.disconnected++;
    else stats.lost++;
    const call = this.call;
    if (call) {
      call.end = end;
      call.live.end();
    }
    this.notice({ type: 'ended', end });
  }

  private waitForClient(ms: number): void {
    this.wait?.unsubscribe();
    if (this.closed) return;
    this.wait = this.ctx.scheduler.schedule(() => this.step({ type: 'timeout' }), ms);
  }
}
