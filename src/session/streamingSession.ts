// The streaming core shared by every WebSocket endpoint: connect with the key in the query,
// send the config frame, the audio, the end-of-audio frame, then read events until `done`.
import { asyncScheduler, Observable, timer, type SchedulerLike, type Subscription } from 'rxjs';
import WebSocket, { type ClientOptions } from 'ws';
import type { IncomingMessage } from 'node:http';
import { audioMetaOf, type AudioChunk } from '../audio/meta.js';
import {
  errorFromClose,
  errorFromHttp,
  InputError,
  SessionError,
  SvcError,
  type AudioAccount,
} from '../errors.js';
import { redact, redactUrl } from '../internal/redact.js';
import type { AudioFormat } from '../schema/audio.js';
import { FlowControl } from '../internal/flow.js';
import { createSessionStats, type SessionStats } from './stats.js';
import { checkAudioParams, streamingUrl } from './url.js';

/** Creates the socket; injectable so tests and proxies can wrap the edge. */
export type WebSocketFactory = (url: string, options: ClientOptions) => WebSocket;

/** Options shared by every streaming session. */
export interface StreamingOptions {
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
  /** Scheduler for every timer (tests use virtual time). Default `asyncScheduler`. */
  readonly scheduler?: SchedulerLike | undefined;
  /** Socket factory, for the edge. Default `new WebSocket(url, options)`. */
  readonly webSocketFactory?: WebSocketFactory | undefined;
}

/** What a decoder makes of one text frame. */
export type Decoded<T> =
  | { readonly ok: true; readonly value: T; readonly kind: 'event' | 'done' | 'error'; readonly errorText?: string }
  | { readonly ok: false; readonly reason: string };

/** How one endpoint speaks: its path, config frame and how its frames decode. */
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
} as const;

/** Resolve key and base URL from options and environment; InputError when missing. */
export function resolveEndpoint(options: StreamingOptions): { apiKey: string; baseUrl: string } {
  const apiKey = options.apiKey ?? process.env['SVC_API_KEY'];
  const baseUrl = options.baseUrl ?? process.env['SVC_BASE_URL'];
  if (!baseUrl) {
    throw new InputError('invalid_argument', 'no base URL: pass baseUrl or set SVC_BASE_URL (`svc-stream emulator` prints one)', { path: 'baseUrl' });
  }
  if (!apiKey) {
    throw new InputError('invalid_argument', 'no API key: pass apiKey or set SVC_API_KEY', { path: 'apiKey' });
  }
  return { apiKey, baseUrl };
}

/**
 * Stream `audio$` to one streaming endpoint and emit its decoded frames.
 *
 * Cold: each subscription opens its own socket and subscribes to `audio$` once.
 * Emits every decoded frame, including the `done` frame, then completes on the close that
 * follows `done` (frames after `done` are out of contract and ignored). Errors with an SvcError on an `error` frame, any other close, a refused
 * handshake, a timeout, a malformed frame, a buffer overflow, and invalid local input
 * (before connecting). Unsubscribing closes the socket and stops the source.
 */
export function streamingSession<T>(audio$: Observable<AudioChunk>, protocol: StreamProtocol<T>, options: StreamingOptions = {}): Observable<T> {
  return new Observable<T>((subscriber) => {
    const scheduler = options.scheduler ?? asyncScheduler;
    const stats = options.stats ?? createSessionStats();
    const highWater = options.highWaterMark ?? DEFAULTS.highWaterMark;
    const maxBuffered = options.maxBufferedBytes ?? DEFAULTS.maxBufferedBytes;
    const meta = audioMetaOf(audio$);

    let apiKey: string;
    let url: URL;
    try {
      const ep = resolveEndpoint(options);
      apiKey = ep.apiKey;
      const query = checkAudioParams(options.format ?? meta?.format);
      url = streamingUrl(ep.baseUrl, protocol.path, apiKey, query);
    } catch (err) {
      stats.phase = 'error';
      subscriber.error(err);
      return;
    }
    const safeUrl = redactUrl(url);
    const clean = (text: string): string => redact(text, [apiKey]);

    const flow = options.flow ?? new FlowControl();
    const queue: AudioChunk[] = [];
    let pending = 0;
    let opened = false;
    let audioEnded = false;
    let endSent = false;
    let doneSeen = false;
    let errorText: string | undefined;
    // A refused handshake is turned into its error when the session fails, so the audio account is exact.
    let handshakeError: (() => SvcError) | undefined;
    let socketError: Error | undefined;
    let finished = false;
    let audioSub: Subscription | undefined;
    let connectTimer: Subscription | undefined;
    let doneTimer: Subscription | undefined;
    let closeTimer: Subscription | undefined;

    const account = (): AudioAccount => ({ read: stats.bytesRead, sent: stats.bytesSent, unsent: stats.bytesRead - stats.bytesSent });

    const stopTimers = (): void => {
      connectTimer?.unsubscribe();
      doneTimer?.unsubscribe();
      closeTimer?.unsubscribe();
    };

    const fail = (err: unknown): void => {
      if (finished) return;
      finished = true;
      stats.phase = 'error';
      stopTimers();
      audioSub?.unsubscribe();
      flow.release();
      shutSocket();
      subscriber.error(err);
    };

    const finish = (): void => {
      if (finished) return;
      finished = true;
      stats.phase = 'done';
      stopTimers();
      audioSub?.unsubscribe();
      flow.release();
      shutSocket();
      subscriber.complete();
    };

    let ws: WebSocket;
    try {
      const factory = options.webSocketFactory ?? ((u: string, o: ClientOptions) => new WebSocket(u, o));
      ws = factory(url.toString(), { maxPayload: options.maxServerFrameBytes ?? DEFAULTS.maxServerFrameBytes, perMessageDeflate: false });
    } catch (err) {
      subscriber.error(new SessionError('connection_failed', clean(`could not open ${safeUrl}: ${(err as Error).message}`), { retryable: false }));
      return;
    }

    function shutSocket(): void {
      if (ws.readyState === WebSocket.CONNECTING) {
        ws.terminate();
      } else if (ws.readyState === WebSocket.OPEN) {
        ws.close(1000, 'client done');
        // A server that never answers the close must not keep the socket alive.
        const t = setTimeout(() => ws.terminate(), 2_000);
        t.unref();
        ws.once('close', () => clearTimeout(t));
      }
    }

    const checkPressure = (): void => {
      if (pending > stats.peakBufferedBytes) stats.peakBufferedBytes = pending;
      const pausable = meta?.flow !== undefined || options.flow !== undefined;
      if (pausable && pending > highWater) {
        if (!flow.paused) {
          flow.pause();
          stats.pauses++;
        }
      } else if (pending > maxBuffered) {
        fail(
          new SessionError(
            'backpressure_overflow',
            `audio arrives faster than the socket sends it: ${pending} bytes waiting exceed maxBufferedBytes=${maxBuffered}; use a pull-capable source (fromReadable) or raise the bound`,
            { retryable: false, audio: account() },
          ),
        );
      }
    };

    const sendChunk = (chunk: AudioChunk): void => {
      const len = chunk.byteLength;
      pending += len;
      ws.send(chunk, { binary: true }, (err) => {
        pending -= len;
        if (!err) {
          stats.bytesSent += len;
          stats.framesSent++;
        }
        if (pending <= highWater / 2) flow.resume();
      });
    };

    const sendEnd = (): void => {
      if (endSent || finished) return;
      endSent = true;
      stats.phase = 'finishing';
      ws.send('');
      const limit = options.doneTimeoutMs ?? DEFAULTS.doneTimeoutMs;
      doneTimer = timer(limit, scheduler).subscribe(() =>
        fail(new SessionError('done_timeout', `no done event within ${limit} ms after the end of audio`, { retryable: true, audio: account() })),
      );
    };

    const onChunk = (chunk: AudioChunk): void => {
      if (finished) return;
      if (!(chunk instanceof Uint8Array)) {
        fail(new InputError('invalid_argument', `audio chunks must be Uint8Array or Buffer, got ${typeof chunk}`));
        return;
      }
      if (chunk.byteLength === 0) return;
      stats.bytesRead += chunk.byteLength;
      if (!opened) {
        queue.push(chunk);
        pending += chunk.byteLength;
      } else {
        sendChunk(chunk);
      }
      checkPressure();
    };

    const onAudioComplete = (): void => {
      audioEnded = true;
      // The end-of-audio frame goes after every chunk: ws sends in order, so once open it can follow at once.
      if (opened) sendEnd();
    };

    ws.on('open', () => {
      if (finished) return;
      opened = true;
      connectTimer?.unsubscribe();
      stats.phase = 'streaming';
      if (protocol.configFrame !== undefined) ws.send(protocol.configFrame);
      const waiting = queue.splice(0);
      for (const chunk of waiting) {
        pending -= chunk.byteLength;
        sendChunk(chunk);
      }
      if (audioEnded) sendEnd();
    });

    ws.on('message', (data, isBinary) => {
      if (finished) return;
      stats.eventsReceived++;
      // `done` is the last event (§3) and the results are complete with it: whatever follows
      // is ignored, as a drop, a stall or any close code after `done` is. (Decoding it failed a
      // complete session on a malformed frame, and an `error` frame armed a second close
      // timer that stopTimers never cleared.)
      if (doneSeen) return;
      if (isBinary) {
        fail(new SessionError('malformed_frame', 'the server sent a binary frame where JSON events were expected', { retryable: false, audio: account() }));
        return;
      }
      // A server that echoes the key gets it masked here, before any event, snapshot or page shows it.
      const text = clean(Buffer.isBuffer(data) ? data.toString('utf8') : Array.isArray(data) ? Buffer.concat(data).toString('utf8') : Buffer.from(data).toString('utf8'));
      const decoded = protocol.decode(text);
      if (!decoded.ok) {
        fail(new SessionError('malformed_frame', `the server sent a frame outside the contract: ${decoded.reason}`, { retryable: false, detail: text.slice(0, 500), audio: account() }));
        return;
      }
      subscriber.next(decoded.value);
      if (decoded.kind === 'done') {
        doneSeen = true;
        doneTimer?.unsubscribe();
        const limit = options.closeTimeoutMs ?? DEFAULTS.closeTimeoutMs;
        // The results are complete at `done`; a server that then never closes cannot hang us.
        closeTimer = timer(limit, scheduler).subscribe(() => finish());
      } else if (decoded.kind === 'error') {
        errorText = decoded.errorText ?? 'error';
        const limit = options.closeTimeoutMs ?? DEFAULTS.closeTimeoutMs;
        closeTimer = timer(limit, scheduler).subscribe(() => {
          const c = errorFromClose(1011, '', errorText, account());
          fail(new SessionError(c.code, `the server reported an error and did not close within ${limit} ms: ${errorText}`, { detail: errorText, retryable: c.retryable, audio: account() }));
        });
      }
    });

    ws.on('unexpected-response', (req, res: IncomingMessage) => {
      const chunks: Buffer[] = [];
      let size = 0;
      res.on('data', (c: Buffer) => {
        size += c.length;
        if (size <= 65_536) chunks.push(c);
      });
      res.on('end', () => {
        const raw = Buffer.concat(chunks).toString('utf8');
        let body: unknown = raw;
        try {
          body = JSON.parse(raw);
        } catch {
          /* a non-JSON body is kept as text */
        }
        const status = res.statusCode ?? 0;
        const http = errorFromHttp(status, body, 'the WebSocket handshake');
        const code = http.code === 'http_error' ? 'handshake_rejected' : http.code;
        handshakeError = () => new SessionError(code, clean(http.message), { status, detail: http.detail, retryable: http.retryable, audio: account() });
        req.destroy();
        ws.terminate();
      });
      res.on('error', () => ws.terminate());
    });

    ws.on('error', (err) => {
      socketError = err;
    });

    ws.on('close', (code, reasonBuf) => {
      const reason = reasonBuf.toString('utf8');
      stats.closeCode = code;
      stats.closeReason = reason;
      if (finished) return;
      if (doneSeen) {
        finish();
        return;
      }
      if (handshakeError) {
        fail(handshakeError());
        return;
      }
      if (!opened) {
        const why = socketError ? clean(socketError.message) : `closed with ${code}`;
        fail(new SessionError('connection_failed', `could not connect to ${safeUrl}: ${why}`, { retryable: true, cause: socketError ? new Error(why) : undefined, audio: account() }));
        return;
      }
      // ws reports server protocol violations (oversized or invalid frames) as WS_ERR_* errors.
      const wsCode = (socketError as { code?: string } | undefined)?.code;
      if (socketError && errorText === undefined && wsCode?.startsWith('WS_ERR_')) {
        const what = wsCode === 'WS_ERR_UNSUPPORTED_MESSAGE_LENGTH' ? `a frame larger than maxServerFrameBytes` : 'an invalid frame';
        fail(new SessionError('malformed_frame', `the server sent ${what}: ${clean(socketError.message)}`, { closeCode: code, retryable: false, audio: account() }));
        return;
      }
      if (code === 1000 && errorText === undefined) {
        fail(new SessionError('missing_done', `the server closed normally before sending done${audioEnded ? '' : ' (audio was still being sent)'}`, { closeCode: code, retryable: true, audio: account() }));
        return;
      }
      const err = errorFromClose(code, clean(reason), errorText, account());
      fail(err);
    });

    const connectLimit = options.connectTimeoutMs ?? DEFAULTS.connectTimeoutMs;
    connectTimer = timer(connectLimit, scheduler).subscribe(() => {
      if (!opened) fail(new SessionError('connect_timeout', `no WebSocket handshake with ${safeUrl} within ${connectLimit} ms`, { retryable: true, audio: account() }));
    });

    // A pull-capable source reads the slot synchronously when subscribed.
    if (meta?.flow) meta.flow.current = flow;
    audioSub = audio$.subscribe({
      next: onChunk,
      error: (err: unknown) => fail(err),
      complete: onAudioComplete,
    });

    return () => {
      if (!finished) {
        finished = true;
        stats.phase = 'closed';
      }
      stopTimers();
      audioSub?.unsubscribe();
      flow.release();
      shutSocket();
    };
  });
}
