// The streaming core shared by every WebSocket endpoint, as a state machine: connect with the
// key in the query, send the config frame, the audio, the end-of-audio frame, then read events
// until `done`. What differs per endpoint (path, config frame, decoding) is in the settings and
// the decoder. The bytes going out are an AudioSender's (AudioSender.ts); what a refusal or a
// close means is closeErrors.ts's. This file keeps the states and the moves between them.
import { Observable, Subscription, timer, type SchedulerLike, type Subscriber } from 'rxjs';
import WebSocket from 'ws';
import type { IncomingMessage } from 'node:http';
import type { AudioChunk } from '../audio/meta.js';
import type { AudioWarningOptions } from './AudioCheck.js';
import { ContractError, SessionError, SvcError, type AudioAccount } from '../errors/index.js';
import { redact, redactUrl } from '../redact.js';
import { rawDataText } from '../internal/wsData.js';
import type { AudioFormat } from '../schema/audio.js';
import type { EventWarning } from '../warnings.js';
import { FlowControl } from '../audio/FlowControl.js';
import { AudioFeed, feedCursorOf, type FeedReader } from './AudioFeed.js';
import { AudioSender } from './AudioSender.js';
import { closeError, errorWithoutCloseError, lostWithoutCloseError, readRefusal, type HandshakeRefusal } from './closeErrors.js';
import { watchSessionLabel } from './sessionLabel.js';
import { countersOf, createSessionStats, reportWarnings, stateStoreOf, type SessionStats, type StatsCounters } from './stats.js';
import type { StateStore } from './StateStore.js';
import { isTerminalStatus, type SessionState } from '../schema/sessionState.js';
import { Heartbeat, type HeartbeatOptions } from './heartbeat.js';
import { checkAudioParams, streamingUrl } from './url.js';
import { connectionKey, type ApiKeyFunction, type SessionSettings, type WebSocketFactory } from './sessionSettings.js';

export type { ApiKeyFunction, WebSocketFactory } from './sessionSettings.js';

/** Options shared by every streaming session. */
export interface StreamingOptions extends AudioWarningOptions {
  /**
   * Models API key. Defaults to `SVC_API_KEY`, read once when the session is subscribed (a
   * reconnect uses the key it started with). A function is asked before each connection, the
   * first and each reconnect (short-lived tokens). Sent only in the handshake URL, never shown.
   */
  readonly apiKey?: string | ApiKeyFunction | undefined;
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
  /** Scheduler for every timer and every reading of the time: deadlines, the heartbeat, the reconnect backoff (tests use virtual time). Default `asyncScheduler`. */
  readonly scheduler?: SchedulerLike | undefined;
  /** Socket factory, for the edge. Default `new WebSocket(url, options)`. */
  readonly webSocketFactory?: WebSocketFactory | undefined;
}

/** What a decoder makes of one text frame: the value and its kind, and the out-of-contract values it tolerated. */
export type Decoded<T> =
  | { readonly ok: true; readonly value: T; readonly kind: 'event' | 'done' | 'error'; readonly errorText?: string; readonly warnings?: readonly EventWarning[] | undefined }
  | { readonly ok: false; readonly reason: string };

/** How one endpoint's text frames decode (the strategy of a session; the path and config frame are its settings'). */
export type Decode<T> = (text: string) => Decoded<T>;

const isTerminal = (s: SessionState): boolean => isTerminalStatus(s.status);

/**
 * Stream `audio$` to one streaming endpoint and emit its decoded frames.
 *
 * Cold: each subscription opens its own socket and subscribes to `audio$` once (or, for the
 * log of a stream's feed, reads it in place: see {@link AudioFeed.from}).
 * Emits every decoded frame, including the `done` frame, then completes on the close that
 * follows `done` (frames after `done` are out of contract and ignored). Errors with an SvcError on an `error` frame, any other close, a refused
 * handshake, a timeout, a malformed frame, a buffer overflow. Unsubscribing closes the socket
 * and stops the source. Its state goes to `stats.state$`, its figures to `stats`, of which it
 * is the one writer.
 */
export function streamingSession<T>(audio$: Observable<AudioChunk>, decode: Decode<T>, settings: SessionSettings, given?: SessionStats): Observable<T> {
  return new Observable<T>((subscriber) => {
    const stats = given ?? createSessionStats();
    const store = stateStoreOf(stats);
    const counters = countersOf(stats);
    // A new subscription starts again from `connecting` (stats given to one before).
    if (store.value.status !== 'connecting') store.set({ status: 'connecting' });
    const cursor = feedCursorOf(audio$);
    if (cursor !== undefined) {
      // A stream's log: read in place from the cursor; the feed is its owner's to start and stop.
      const session = new StreamingSession(cursor.feed, decode, settings, { counters, store, format: cursor.format, from: cursor.from }, subscriber);
      session.start();
      return () => session.unsubscribe();
    }
    let session: StreamingSession<T> | undefined;
    // One session owns the feed: the source is let go as soon as the session reads no more.
    const feed = new AudioFeed(audio$, { ...settingsForFeed(settings), keepSent: false }, counters, {
      failed: (err) => session?.fail(err),
      released: () => feed.stop(),
    });
    session = new StreamingSession(feed, decode, settings, { counters, store, format: settings.format, from: 0 }, subscriber);
    session.start();
    if (!isTerminalStatus(store.value.status)) feed.start();
    return () => {
      session.unsubscribe();
      feed.stop();
      feed.finish();
    };
  });
}

/** What a stream's feed takes of the settings. */
export function settingsForFeed(settings: SessionSettings): AudioWarningOptions & { readonly format: AudioFormat | undefined; readonly flow: FlowControl | undefined } {
  return { format: settings.format, flow: settings.flow, onAudioWarning: settings.onAudioWarning };
}

/** What one session over a feed is given besides the decoder and the settings. */
export interface SessionSetup {
  /** Its own figures (it is their one writer). */
  readonly counters: StatsCounters;
  /** Where its state goes. */
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
  /** Its own figures (frames, events, warnings, pauses, close): it is their one writer. */
  private readonly stats: StatsCounters;
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

  constructor(
    private readonly feed: AudioFeed,
    private readonly decode: Decode<T>,
    private readonly settings: SessionSettings,
    private readonly setup: SessionSetup,
    private readonly subscriber: Subscriber<T>,
  ) {
    this.stats = setup.counters;
    this.store = setup.store;
    this.scheduler = settings.scheduler;
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
      settings,
      setup.from,
    );
  }

  /** Stream position up to which this session's frames were flushed (its start until one was): the feed holds what lies after. */
  get flushedPosition(): number {
    return this.sender.flushedPosition;
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
      this.feed.letGo(this);
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
    return this.feed.account();
  }

  private clean(text: string): string {
    return redact(text, [this.apiKey]);
  }

  start(): void {
    const limit = this.settings.connectTimeoutMs;
    // The handshake's deadline covers asking a key function for this connection's key.
    this.stateTimer = timer(limit, this.scheduler).subscribe(() =>
      this.fail(new SessionError('connect_timeout', `no WebSocket handshake with ${this.safeUrl || 'the service'} within ${limit} ms`, { audio: this.account() })),
    );
    // Read the feed from here on: the source flows while this session does not push back.
    this.release = this.feed.attach(this, this.flow);
    this.audioEnded = this.feed.completed;
    let key: string | Promise<string>;
    try {
      key = connectionKey(this.settings.apiKey);
    } catch (err) {
      this.keyFailed(err);
      return;
    }
    if (typeof key === 'string') this.connect(key);
    else key.then((k) => this.store.value.status === 'connecting' && this.guard(() => this.connect(k)), (err: unknown) => this.keyFailed(err));
  }

  /** The key function failed for this connection: an InputError as it is, anything else a connection that could not be made. */
  private keyFailed(err: unknown): void {
    if (err instanceof SvcError) this.fail(err);
    else this.fail(new SessionError('connection_failed', `the apiKey function failed: ${err instanceof Error ? err.message : String(err)}`, { audio: this.account(), cause: err }));
  }

  private connect(apiKey: string): void {
    const settings = this.settings;
    this.apiKey = apiKey;
    let url: URL;
    try {
      const query = this.setup.format === settings.format ? settings.query : checkAudioParams(this.setup.format);
      url = streamingUrl(settings.baseUrl, settings.path, apiKey, query);
    } catch (err) {
      this.fail(err);
      return;
    }
    this.safeUrl = redactUrl(url);
    let ws: WebSocket;
    try {
      ws = settings.webSocketFactory(url.toString(), { maxPayload: settings.maxServerFrameBytes, perMessageDeflate: false });
    } catch (err) {
      this.fail(new SessionError('connection_failed', this.clean(`could not open ${this.safeUrl}: ${(err as Error).message}`), { audio: this.account() }));
      return;
    }
    this.ws = ws;
    watchSessionLabel(ws, this.stats);
    this.sender.attach(ws);
    // A throw in a handler (a decoder, say) fails the session instead of escaping
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
    const limit = this.settings.doneTimeoutMs;
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
    const limit = this.settings.closeTimeoutMs;
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
    if (this.settings.configFrame !== undefined) ws.send(this.settings.configFrame);
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
    const decoded = this.decode(text);
    if (!decoded.ok) {
      this.fail(new ContractError('malformed_frame', `the server sent a frame outside the contract: ${decoded.reason}`, { detail: text.slice(0, 500), audio: this.account() }));
      return;
    }
    // Tolerated values are counted and told before their event is emitted.
    if (decoded.warnings !== undefined) reportWarnings(decoded.warnings, this.stats, this.settings.onWarning);
    this.subscriber.next(decoded.value);
    // The consumer may have unsubscribed in `next`; the transition below then does nothing.
    const limit = this.settings.closeTimeoutMs;
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
    const settings = this.settings.heartbeat;
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

  /**
   * A pong that echoes one of our pings: the server read every frame flushed before that ping
   * (and sent what it had to say of them first), so the feed hears of it: the resilient layer
   * lets such audio go at the replay bound.
   */
  private onPong(data: Buffer): void {
    if (data.length !== 4) return;
    const n = data.readUInt32BE(0);
    const at = this.pings.get(n);
    if (at === undefined) return;
    for (const k of this.pings.keys()) {
      if (k > n) break;
      this.pings.delete(k);
    }
    this.feed.heard(at);
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
      const t = timer(this.settings.shutTimeoutMs, this.scheduler).subscribe(() => ws.terminate());
      ws.once('close', () => t.unsubscribe());
    }
  }
}

