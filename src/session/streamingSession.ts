// The streaming core shared by every WebSocket endpoint, as a state machine: connect with the
// key in the query, send the config frame, the audio, the end-of-audio frame, then read events
// until `done`. What differs per endpoint (path, config frame, decoding) is a StreamProtocol.
// The bytes going out are an AudioSender's (audioSender.ts); what a refusal or a close means is
// closeErrors.ts's. This file keeps the states and the moves between them.
import { asyncScheduler, Observable, Subscription, timer, type SchedulerLike, type Subscriber } from 'rxjs';
import WebSocket, { type ClientOptions } from 'ws';
import type { IncomingMessage } from 'node:http';
import { audioMetaOf, type AudioChunk } from '../audio/meta.js';
import type { AudioWarningOptions } from './audioCheck.js';
import { ContractError, SessionError, type AudioAccount } from '../errors.js';
import { modelsCredentials } from '../credentials.js';
import { redact, redactUrl } from '../redact.js';
import { rawDataText } from '../internal/wsData.js';
import type { AudioFormat } from '../schema/audio.js';
import { FlowControl } from '../audio/flow.js';
import { AudioFeed, type FeedReader } from './audioFeed.js';
import { AudioSender } from './audioSender.js';
import { closeError, errorWithoutCloseError, lostWithoutCloseError, readRefusal, type HandshakeRefusal } from './closeErrors.js';
import { accountOf, createSessionStats, stateStoreOf, type SessionStats } from './stats.js';
import { followState, type StateStore } from './stateStore.js';
import { isTerminalStatus, type SessionState } from '../schema/sessionState.js';
import { Heartbeat, resolveHeartbeat, type HeartbeatOptions } from './heartbeat.js';
import { checkAudioParams, streamingUrl } from './url.js';

/** Creates the socket; injectable so tests and proxies can wrap the edge. */
export type WebSocketFactory = (url: string, options: ClientOptions) => WebSocket;

/** Options shared by every streaming session. */
export interface StreamingOptions extends AudioWarningOptions {
  /** Models API key. Defaults to `SVC_API_KEY`. Sent only in the handshake URL, never shown. */
  readonly apiKey?: string | undefined;
  /** Models API base (`https://…` or `http://127.0.0.1:…`). Defaults to `SVC_BASE_URL`. */
  readonly baseUrl?: string | undefined;
  /** Audio format for the query string. Defaults to the format the audio source carries. */
  readonly format?: AudioFormat | undefined;
  /** Time allowed for the handshake. Default 10 000 ms. */
  readonly connectTimeoutMs?: number | undefined;
  /** Time allowed between the end-of-audio frame and `done`. Default 120 000 ms. */
  readonly doneTimeoutMs?: number | undefined;
  /** Time allowed for the server's close after `done` or `error`. Default 5 000 ms. */
  readonly closeTimeoutMs?: number | undefined;
  /** Bytes waiting to be flushed above which a pull-capable source is paused. Default 1 MiB. */
  readonly highWaterMark?: number | undefined;
  /** Bytes waiting to be flushed above which a push-only source fails the session. Default 32 MiB. */
  readonly maxBufferedBytes?: number | undefined;
  /** Largest server frame accepted. Default 16 MiB. */
  readonly maxServerFrameBytes?: number | undefined;
  /** Flow control shared with a pull-capable source upstream of other operators. */
  readonly flow?: FlowControl | undefined;
  /** Live counters, updated in place. */
  readonly stats?: SessionStats | undefined;
  /**
   * Called on every change of state, old state first, after the old state's timers and
   * subscriptions were released: a convenience over `stats.state$`. A throw is reported as
   * RxJS reports an unhandled error, and changes nothing else.
   */
  readonly onStateChange?: ((oldState: SessionState, newState: SessionState) => void) | undefined;
  /**
   * Dead-connection detection once the socket is open: a WebSocket ping after `intervalMs`
   * (default 5000) without inbound traffic, and a retryable `heartbeat_timeout` error after
   * `timeoutMs` (default 15 000) without any, in every phase. Any inbound frame counts as
   * liveness. `false` turns it off. (The handshake has its own `connectTimeoutMs`.)
   */
  readonly heartbeat?: HeartbeatOptions | false | undefined;
  /** Scheduler for every timer (tests use virtual time). Default `asyncScheduler`. */
  readonly scheduler?: SchedulerLike | undefined;
  /** Socket factory, for the edge. Default `new WebSocket(url, options)`. */
  readonly webSocketFactory?: WebSocketFactory | undefined;
}

/** What a decoder makes of one text frame. */
export type Decoded<T> =
  | { readonly ok: true; readonly value: T; readonly kind: 'event' | 'done' | 'error'; readonly errorText?: string }
  | { readonly ok: false; readonly reason: string };

/** How one endpoint speaks (the strategy of a session): its path, config frame and how its frames decode. */
export interface StreamProtocol<T> {
  readonly path: string;
  /** The first text frame, or undefined for endpoints that take none. */
  readonly configFrame: string | undefined;
  decode(text: string): Decoded<T>;
}

const DEFAULTS = {
  connectTimeoutMs: 10_000,
  doneTimeoutMs: 120_000,
  closeTimeoutMs: 5_000,
  highWaterMark: 1 << 20,
  maxBufferedBytes: 32 << 20,
  maxServerFrameBytes: 16 << 20,
  /** A server that never answers our close must not keep the socket alive. */
  shutTimeoutMs: 2_000,
} as const;

const isTerminal = (s: SessionState): boolean => isTerminalStatus(s.status);

/**
 * Stream `audio$` to one streaming endpoint and emit its decoded frames.
 *
 * Cold: each subscription opens its own socket and subscribes to `audio$` once.
 * Emits every decoded frame, including the `done` frame, then completes on the close that
 * follows `done` (frames after `done` are out of contract and ignored). Errors with an SvcError on an `error` frame, any other close, a refused
 * handshake, a timeout, a malformed frame, a buffer overflow, and invalid local input
 * (before connecting). Unsubscribing closes the socket and stops the source. Its state goes
 * to `stats.state$` (and `onStateChange`).
 */
export function streamingSession<T>(audio$: Observable<AudioChunk>, protocol: StreamProtocol<T>, options: StreamingOptions = {}): Observable<T> {
  return new Observable<T>((subscriber) => {
    const stats = options.stats ?? createSessionStats();
    const store = stateStoreOf(stats);
    // A new subscription starts again from `connecting` (stats given to one before).
    if (store.value.status !== 'connecting') store.set({ status: 'connecting' });
    const following = followState(store.state$, options.onStateChange);
    let session: StreamingSession<T> | undefined;
    // One session owns the feed: the source is let go as soon as the session reads no more.
    const feed = new AudioFeed(audio$, { ...options, keepSent: false }, stats, {
      failed: (err) => session?.fail(err),
      released: () => feed.stop(),
    });
    session = new StreamingSession(feed, protocol, options, { stats, store, format: options.format ?? audioMetaOf(audio$)?.format, from: 0 }, subscriber);
    session.start();
    if (!isTerminalStatus(store.value.status)) feed.start();
    return () => {
      session.unsubscribe();
      feed.stop();
      feed.finish();
      following?.unsubscribe();
    };
  });
}

/** What one session over a feed is given besides the protocol and the options. */
export interface SessionSetup {
  /** The counters it adds to (shared by every session of a stream). */
  readonly stats: SessionStats;
  /** Where its state goes: the stream's `stats` store for a plain session, a store of its own under the resilient layer. */
  readonly store: StateStore;
  /** The format for the query parameters. */
  readonly format: AudioFormat | undefined;
  /** The stream position its audio starts at (0; a resumed session's replay start). */
  readonly from: number;
}

/**
 * One session over a feed (the plain session): reads the feed's log from `setup.from`, sets
 * its states in `setup.store`, emits to `subscriber`. Starts on `start()`; the feed is its
 * owner's to start and stop.
 */
export class StreamingSession<T> implements FeedReader {
  /** The timer the current state owns (connect, done or close timeout). */
  private stateTimer: Subscription | undefined;
  /** Lets go of the feed (owned by `connecting`, `streaming`, `paused`). */
  private release: (() => void) | undefined;
  private ws: WebSocket | undefined;
  private readonly stats: SessionStats;
  private readonly store: StateStore;
  private readonly scheduler: SchedulerLike;
  /** Paused while the socket is backed up (and once closing); the feed's gate follows it while attached. */
  private readonly flow = new FlowControl();
  /** The outbound bytes: this session's position in the log, frames in flight, pressure. */
  private readonly sender: AudioSender;
  private opened = false;
  private audioEnded = false;
  private errorText: string | undefined;
  /** A refused handshake; it becomes its error when the session fails, so the audio account is exact. */
  private refusal: HandshakeRefusal | undefined;
  private socketError: Error | undefined;
  private apiKey = '';
  private safeUrl = '';
  private heartbeat: Heartbeat | undefined;
  /** Each ping not yet answered: its number (its payload, echoed by the pong) → the stream position flushed when it went. */
  private readonly pings = new Map<number, number>();
  private pingCount = 0;
  private acknowledged: number;

  constructor(
    private readonly feed: AudioFeed,
    private readonly protocol: StreamProtocol<T>,
    private readonly options: StreamingOptions,
    private readonly setup: SessionSetup,
    private readonly subscriber: Subscriber<T>,
  ) {
    this.stats = setup.stats;
    this.store = setup.store;
    this.scheduler = options.scheduler ?? asyncScheduler;
    this.sender = new AudioSender(
      feed,
      this.stats,
      {
        lost: () => this.lose(),
        drained: () => {
          if (this.store.value.status === 'paused') this.transition({ status: 'streaming' });
        },
        pressure: () => this.onPressure(),
        overflow: (err) => this.fail(err),
      },
      {
        highWaterMark: options.highWaterMark ?? DEFAULTS.highWaterMark,
        maxBufferedBytes: options.maxBufferedBytes ?? DEFAULTS.maxBufferedBytes,
      },
      setup.from,
    );
    this.acknowledged = setup.from;
  }

  get state(): SessionState {
    return this.store.value;
  }

  /** Stream position up to which this session's frames were flushed (its start until one was). */
  get flushedPosition(): number {
    return this.sender.flushedPosition;
  }

  /**
   * Stream position up to which the server has read this session's audio, as far as it said:
   * what was flushed when the heartbeat sent a ping it has answered (the pong comes after
   * every frame before the ping was read, and after what the server sent about them). Its
   * start until then.
   */
  get acknowledgedPosition(): number {
    return this.acknowledged;
  }

  /**
   * The one transition: releases what the old state owned (its timer; the feed when the new
   * state reads no audio; the socket when the new state is terminal), enters the new state,
   * and sets it in the store (which tells `state$`'s subscribers). A terminal state is never left.
   */
  private transition(next: SessionState, owns?: Subscription): void {
    const old = this.store.value;
    if (isTerminal(old)) {
      owns?.unsubscribe();
      return;
    }
    this.stateTimer?.unsubscribe();
    this.stateTimer = owns;
    const reading = next.status === 'connecting' || next.status === 'streaming' || next.status === 'paused';
    if (next.status === 'paused' && !this.flow.paused) {
      this.flow.pause();
      this.stats.pauses++;
    } else if (old.status === 'paused' && next.status === 'streaming') {
      this.flow.resume();
    } else if (next.status === 'closing' || isTerminal(next)) {
      // Nothing more is pulled from a source, nor sent, once the connection is going away.
      this.flow.pause();
      this.sender.halt();
    }
    if (!reading) this.releaseFeed();
    if (isTerminal(next)) {
      this.heartbeat?.stop();
      this.shutSocket();
    }
    this.store.set(next);
  }

  private releaseFeed(): void {
    const release = this.release;
    this.release = undefined;
    release?.();
  }

  /** Fail with `err` (once; nothing after a terminal state). */
  fail(err: unknown): void {
    if (isTerminal(this.store.value)) return;
    this.transition({ status: 'failed', error: err });
    this.subscriber.error(err);
  }

  private finish(): void {
    if (isTerminal(this.store.value)) return;
    this.transition({ status: 'done' });
    this.subscriber.complete();
  }

  unsubscribe(): void {
    this.transition({ status: 'closed' });
  }

  private guard(run: () => void): void {
    try {
      run();
    } catch (err) {
      this.fail(err);
    }
  }

  private account(): AudioAccount {
    return accountOf(this.stats);
  }

  private clean(text: string): string {
    return redact(text, [this.apiKey]);
  }

  start(): void {
    let url: URL;
    try {
      const ep = modelsCredentials(this.options);
      this.apiKey = ep.apiKey;
      const query = checkAudioParams(this.setup.format);
      resolveHeartbeat(this.options.heartbeat); // a bad option fails before connecting
      url = streamingUrl(ep.baseUrl, this.protocol.path, this.apiKey, query);
    } catch (err) {
      this.fail(err);
      return;
    }
    this.safeUrl = redactUrl(url);
    let ws: WebSocket;
    try {
      const factory = this.options.webSocketFactory ?? ((u: string, o: ClientOptions) => new WebSocket(u, o));
      ws = factory(url.toString(), { maxPayload: this.options.maxServerFrameBytes ?? DEFAULTS.maxServerFrameBytes, perMessageDeflate: false });
    } catch (err) {
      this.fail(new SessionError('connection_failed', this.clean(`could not open ${this.safeUrl}: ${(err as Error).message}`), { audio: this.account() }));
      return;
    }
    this.ws = ws;
    this.sender.attach(ws);
    // A throw in a handler (a protocol's decode, say) fails the session instead of escaping
    // into the socket's event emitter.
    ws.on('open', () => this.guard(() => this.onOpen()));
    ws.on('message', (data, isBinary) => this.guard(() => this.onMessage(data, isBinary)));
    ws.on('unexpected-response', (req, res) => this.guard(() => this.onRefused(req, res)));
    ws.on('error', (err) => {
      this.socketError = err;
    });
    ws.on('close', (code, reason) => this.guard(() => this.onClose(code, reason.toString('utf8'))));
    ws.on('pong', (data) => {
      this.heartbeat?.touch();
      this.onPong(data);
    });
    ws.on('ping', () => this.heartbeat?.touch());

    const limit = this.options.connectTimeoutMs ?? DEFAULTS.connectTimeoutMs;
    this.stateTimer = timer(limit, this.scheduler).subscribe(() =>
      this.fail(new SessionError('connect_timeout', `no WebSocket handshake with ${this.safeUrl} within ${limit} ms`, { audio: this.account() })),
    );
    // Read the feed from here on: the source flows while this session does not push back.
    this.release = this.feed.attach(this, this.flow);
    this.audioEnded = this.feed.completed;
  }

  // ---- audio (the feed's reader) -----------------------------------------------------------

  sendsAtOnce(len: number): boolean {
    return this.sender.sendsAtOnce(len);
  }

  sendNow(chunk: Uint8Array, len: number): void {
    this.sender.sendNow(chunk, len);
  }

  appended(): void {
    // Per chunk: no closure for `guard`.
    try {
      this.sender.appended();
    } catch (err) {
      this.fail(err);
    }
  }

  /** More bytes wait than the high-water mark: pause a pull-capable source. */
  private onPressure(): void {
    if (this.store.value.status === 'streaming') {
      this.transition({ status: 'paused' });
    } else if (this.store.value.status === 'connecting' && !this.flow.paused) {
      // Entered as `paused` on open.
      this.flow.pause();
      this.stats.pauses++;
    }
  }

  completed(): void {
    this.guard(() => {
      this.audioEnded = true;
      const status = this.store.value.status;
      // The end-of-audio frame goes after every chunk: ws sends in order, so once open it can follow at once.
      if (status === 'streaming' || status === 'paused') this.sendEnd();
    });
  }

  private sendEnd(): void {
    if (!this.sender.end()) return;
    const limit = this.options.doneTimeoutMs ?? DEFAULTS.doneTimeoutMs;
    this.transition(
      { status: 'finishing' },
      timer(limit, this.scheduler).subscribe(() =>
        this.fail(new SessionError('done_timeout', `no done event within ${limit} ms after the end of audio`, { audio: this.account() })),
      ),
    );
  }

  /** A send failed or the socket is no longer open: read nothing more, wait for the close to say why. */
  private lose(): void {
    const status = this.store.value.status;
    if (status === 'closing' || isTerminal(this.store.value)) return;
    const limit = this.options.closeTimeoutMs ?? DEFAULTS.closeTimeoutMs;
    this.transition(
      { status: 'closing', reason: 'lost' },
      timer(limit, this.scheduler).subscribe(() => this.fail(lostWithoutCloseError(limit, this.errorText, this.account()))),
    );
  }

  // ---- socket ------------------------------------------------------------------------------

  private onOpen(): void {
    if (this.store.value.status !== 'connecting') return;
    this.opened = true;
    const ws = this.ws!;
    this.startHeartbeat(ws);
    if (this.protocol.configFrame !== undefined) ws.send(this.protocol.configFrame);
    this.transition({ status: this.flow.paused ? 'paused' : 'streaming' });
    this.sender.open();
    if (this.audioEnded) this.sendEnd();
  }

  private onMessage(data: WebSocket.RawData, isBinary: boolean): void {
    const state = this.store.value;
    if (isTerminal(state)) return;
    this.heartbeat?.touch();
    this.stats.eventsReceived++;
    // `done` is the last event (§3) and the results are complete with it: whatever follows
    // is ignored, as a drop, a stall or any close code after `done` is.
    if (state.status === 'closing' && state.reason === 'done') return;
    if (isBinary) {
      this.fail(new ContractError('malformed_frame', 'the server sent a binary frame where JSON events were expected', { audio: this.account() }));
      return;
    }
    // A server that echoes the key gets it masked here, before any event, snapshot or page shows it.
    const text = this.clean(rawDataText(data));
    const decoded = this.protocol.decode(text);
    if (!decoded.ok) {
      this.fail(new ContractError('malformed_frame', `the server sent a frame outside the contract: ${decoded.reason}`, { detail: text.slice(0, 500), audio: this.account() }));
      return;
    }
    this.subscriber.next(decoded.value);
    // The consumer may have unsubscribed in `next`; the transition below then does nothing.
    const limit = this.options.closeTimeoutMs ?? DEFAULTS.closeTimeoutMs;
    if (decoded.kind === 'done') {
      // §3: a processing failure is `error`, then the close. A `done` after the `error` (out of
      // contract) is delivered but does not undo the failure: the close still fails the session.
      const now = this.store.value;
      if (now.status === 'closing' && now.reason === 'error') return;
      // The results are complete at `done`; a server that then never closes cannot hang us.
      this.transition({ status: 'closing', reason: 'done' }, timer(limit, this.scheduler).subscribe(() => this.finish()));
    } else if (decoded.kind === 'error') {
      const errorText = decoded.errorText ?? 'error';
      this.errorText = errorText;
      this.transition(
        { status: 'closing', reason: 'error' },
        timer(limit, this.scheduler).subscribe(() => this.fail(errorWithoutCloseError(limit, errorText, this.account()))),
      );
    }
  }

  /** A silent connection (no event, no pong) is declared dead after the heartbeat's deadline. */
  private startHeartbeat(ws: WebSocket): void {
    const settings = resolveHeartbeat(this.options.heartbeat);
    if (settings === undefined) return;
    const ping = (): void => {
      if (ws.readyState !== WebSocket.OPEN) return;
      // Numbered, so that only the pong of this ping (which echoes its payload) acknowledges what went before it.
      const n = this.pingCount++;
      this.pings.set(n, this.sender.flushedPosition);
      const payload = Buffer.allocUnsafe(4);
      payload.writeUInt32BE(n >>> 0);
      ws.ping(payload, undefined, () => undefined);
    };
    this.heartbeat = new Heartbeat(settings, this.scheduler, ping, (silentMs) => {
      const now = this.store.value;
      // After `done` the results are complete: a peer dead before its close changes nothing.
      if (now.status === 'closing' && now.reason === 'done') {
        this.finish();
        ws.terminate();
        return;
      }
      this.fail(
        new SessionError('heartbeat_timeout', `nothing came from ${this.safeUrl} for ${Math.round(silentMs)} ms (heartbeat timeoutMs=${settings.timeoutMs}): the connection is dead`, {
          audio: this.account(),
        }),
      );
      // A dead peer will not answer a close frame: cut the socket now.
      ws.terminate();
    });
  }

  /** A pong that echoes one of our pings: what was flushed before that ping has been read. */
  private onPong(data: Buffer): void {
    if (data.length !== 4) return;
    const n = data.readUInt32BE(0);
    const at = this.pings.get(n);
    if (at === undefined) return;
    for (const k of this.pings.keys()) {
      if (k > n) break;
      this.pings.delete(k);
    }
    if (at > this.acknowledged) this.acknowledged = at;
  }

  private onRefused(req: { destroy(): void }, res: IncomingMessage): void {
    const ws = this.ws!;
    readRefusal(
      res,
      (refusal) => {
        this.refusal = refusal;
        req.destroy();
        ws.terminate();
      },
      () => ws.terminate(),
    );
  }

  private onClose(code: number, reason: string): void {
    this.stats.closeCode = code;
    this.stats.closeReason = reason;
    const state = this.store.value;
    if (isTerminal(state)) return;
    if (state.status === 'closing' && state.reason === 'done') {
      this.finish();
      return;
    }
    this.fail(
      closeError({
        code,
        reason,
        errorText: this.errorText,
        opened: this.opened,
        audioEnded: this.audioEnded,
        socketError: this.socketError,
        refusal: this.refusal,
        audio: this.account(),
        safeUrl: this.safeUrl,
        apiKey: this.apiKey,
      }),
    );
  }

  private shutSocket(): void {
    const ws = this.ws;
    if (ws === undefined) return;
    if (ws.readyState === WebSocket.CONNECTING) {
      ws.terminate();
    } else if (ws.readyState === WebSocket.OPEN) {
      ws.close(1000, 'client done');
      const t = timer(DEFAULTS.shutTimeoutMs, this.scheduler).subscribe(() => ws.terminate());
      ws.once('close', () => t.unsubscribe());
    }
  }
}

