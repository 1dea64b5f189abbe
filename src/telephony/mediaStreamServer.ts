// A WebSocket server for the JSON media streams of cloud telephony providers: one call per
// stream (per track, or both tracks as two channels), each an audio stream of G.711 at 8 kHz.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { asyncScheduler, Observable, type SchedulerLike } from 'rxjs';
import type { WebSocket } from 'ws';
import { AudioSourceError, InputError } from '../errors/index.js';
import { callUser } from '../internal/userCallback.js';
import { DEFAULT_LIVE_FRAME_MS } from './LiveAudio.js';
import { warnOnce } from './limitWarning.js';
import type { LimitWarning, WarningHandler } from '../warnings.js';
import { checkUpgrade, type MediaStreamAuth, type MediaStreamRefusal } from './mediaStreamAuth.js';
import { MediaStreamConnection, type ConnectionContext, type DecodedPayload, type MediaStreamCall, type MediaTrack } from './MediaStreamConnection.js';
import { MEDIA_STREAM_PRESETS, type MediaStreamPreset, type MediaStreamPresetName } from './mediaStreamPresets.js';
import { workerHandle, type CallWorker } from './callWorker.js';
import type { ServiceLifecycle } from '../service/lifecycle.js';
import type { ServiceMetric } from '../service/metric.js';
import { StreamTotals } from './streamTotals.js';
import type { StreamStats } from './PlayoutStream.js';
import { OVER_CAPACITY_CLOSE_CODE, wsCallServer } from './wsCallServer.js';

export type { MediaStreamCall, MediaTrack } from './MediaStreamConnection.js';

/** Counters of the server, updated in place. */
export interface MediaStreamServerStats {
  connections: number;
  messages: number;
  /** Messages that could not be used: not JSON, binary, no event, media before start or without a valid payload, unknown encoding. */
  malformed: number;
  /** Well-formed messages the server has no use for (`connected`, `mark`, `dtmf`, unknown events, unwanted tracks). */
  ignored: number;
  /** Calls (streams or tracks) emitted. */
  calls: number;
  /** Upgrade requests refused by `authenticate` (answered 401, no WebSocket). */
  unauthorized: number;
  /** Connections over `maxConnections` (accepted, then closed with 1013). */
  overCapacity: number;
  /** Connections closed with 1009 for a message over `maxPayload`. */
  oversized: number;
  /** Upgrade requests answered 503 (with `Retry-After`) because the service drains (`lifecycle`). */
  refusedDraining: number;
}

/** Fresh {@link MediaStreamServerStats}, every counter at zero; pass it as `stats` and read it while the server runs. */
export function createMediaStreamServerStats(): MediaStreamServerStats {
  return { connections: 0, messages: 0, malformed: 0, ignored: 0, calls: 0, unauthorized: 0, overCapacity: 0, oversized: 0, refusedDraining: 0 };
}

/** Largest message by default: real media messages are under 2 KB. */
export const DEFAULT_MEDIA_STREAM_MAX_PAYLOAD = 64 * 1024;
/** Connections at once by default. */
export const DEFAULT_MEDIA_STREAM_MAX_CONNECTIONS = 100;
/** Close code of a connection over `maxConnections` (RFC 6455 registry: Try Again Later). */
export const MEDIA_STREAM_OVER_CAPACITY_CODE = OVER_CAPACITY_CLOSE_CODE;
/** Seconds a provider is told to wait (`Retry-After`) when the server is full or drains. */
const RETRY_AFTER_S = 5;

/** Options of {@link mediaStreamServer}: listen address and path, provider preset, track mode, jitter and skew bounds, callbacks and counters. */
export interface MediaStreamServerOptions {
  /** Interface (default 127.0.0.1). */
  readonly host?: string | undefined;
  /** Port (default 0: any free port; see `onListening`). */
  readonly port?: number | undefined;
  /** Only accept upgrades on this path (default: any). */
  readonly path?: string | undefined;
  /** Field names: a provider, or `auto` to tell from each `start` message (default). */
  readonly preset?: MediaStreamPresetName | MediaStreamPreset | 'auto' | undefined;
  /** `separate`: one call per track (default); `interleaved`: one two-channel call per stream. */
  readonly trackMode?: 'separate' | 'interleaved' | undefined;
  /** Tracks to take (default both). */
  readonly tracks?: readonly MediaTrack[] | undefined;
  /** Longest wait for a missing chunk, ms (default 60). */
  readonly playoutDelayMs?: number | undefined;
  /** In interleaved mode, how far (ms) one track may run ahead before the other is padded (default 500). */
  readonly maxSkewMs?: number | undefined;
  /** Called with the bound address once listening (the port, when port 0 was asked). */
  readonly onListening?: ((address: AddressInfo) => void) | undefined;
  /** Told about every malformed message (they are also counted). */
  readonly onMalformed?: ((reason: string, raw: string) => void) | undefined;
  readonly stats?: MediaStreamServerStats | undefined;
  readonly scheduler?: SchedulerLike | undefined;
  /**
   * Largest WebSocket message, bytes (default 64 KiB). A larger one is refused at its frame
   * header, never buffered, and closes the connection with 1009 (its calls' audio completes).
   */
  readonly maxPayload?: number | undefined;
  /**
   * Connections at once (default 100). One more completes its upgrade and is closed at once
   * with 1013 (try again later), reason `too many connections`. The first refusal is reported
   * once through `onWarning`.
   */
  readonly maxConnections?: number | undefined;
  /**
   * Told once per subscription, the first time `maxConnections` refuses a connection (code
   * `max_connections`, with the option to raise). Default: `process.emitWarning` (printed once
   * to stderr, code `SVC_STREAM_MAX_CONNECTIONS`). Later refusals are only counted in
   * `stats.overCapacity`.
   */
  readonly onWarning?: WarningHandler<LimitWarning> | undefined;
  /**
   * Who may connect (default: anyone who can reach `host`). Checked on the upgrade request; a
   * refusal is HTTP 401 and no WebSocket. Set it whenever the server listens beyond loopback.
   */
  readonly authenticate?: MediaStreamAuth | undefined;
  /** Told about every refused upgrade (they are also counted in `stats.unauthorized`). */
  readonly onRefused?: ((reason: MediaStreamRefusal, req: IncomingMessage) => void) | undefined;
  /**
   * Frames of audio, ms (default 100): a call's 20 ms media
   * chunks are joined into frames of `frameMs` before the session sends them, five times fewer
   * frames (sends, masks, syscalls) than one per message. The cost is latency: a chunk reaches
   * the service at most `frameMs` later than it would alone (about half that on average; a
   * frame that is not full goes within `frameMs` of its first chunk, from the process's one
   * timer wheel, and at the end of the call). `20` (or 0: each chunk as it is released) gives
   * the lowest latency.
   */
  readonly frameMs?: number | undefined;
  /**
   * The worker handle `callWorkers` gives each worker process: every worker listens on `port`
   * (node:cluster deals the connections out round-robin), `maxConnections` bounds the
   * connections of every worker together (the primary's count, taken before the upgrade), and
   * `stats` add up in the primary.
   */
  readonly worker?: CallWorker | undefined;
  /**
   * The service's life cycle (`ServiceLifecycle`): the server attaches to it as a `CallServer`
   * and makes it `ready` once it listens. Draining, an upgrade is answered HTTP 503 with
   * `Retry-After: 5` before it becomes a WebSocket (counted in `stats.refusedDraining`, told
   * once through `onWarning`, code `draining`), so the provider tries another instance, while
   * the connections open go on; forced, each is closed with 1001 (going away). Its metrics:
   * connections, messages, refusals by reason, and the tracks' packets and jitter.
   * Under `callWorkers`, the worker's own life cycle is used by default.
   */
  readonly lifecycle?: ServiceLifecycle | undefined;
  /**
   * Plain HTTP requests (not upgrades), before the server's own answer (426): return true when
   * you answered it (the operator's `/healthz`, `/readyz`, `/metrics` on the same port).
   */
  readonly onRequest?: ((req: IncomingMessage, res: ServerResponse) => boolean) | undefined;
}

/**
 * Accept media-stream WebSocket connections and emit one {@link MediaStreamCall} per stream
 * and track (or per stream, tracks interleaved as two channels).
 *
 * - Cold: each subscription starts its own server (port 0 picks a free one, reported through
 *   `onListening`); unsubscribing closes it and ends every call's audio.
 * - Reads `connected`, `start`, `media`, `stop` in the field names of the preset (Twilio or
 *   Telnyx, or detected from `start`). Media payloads are base64 G.711 at 8 kHz; `chunk` and
 *   `timestamp` arrive as strings and drive a jitter buffer per track, so duplicates are
 *   dropped, reordering is undone and missing chunks become silence.
 * - A call's audio completes on `stop` or when the connection closes.
 * - Malformed messages are counted, reported to `onMalformed`, and never end the connection
 *   or the server. The observable errors only when the server cannot listen.
 * - Bounded: a message over `maxPayload` (64 KiB) closes its connection with 1009 without being
 *   buffered; past `maxConnections` (100) a connection is closed at once with 1013 (the first
 *   time reported once through `onWarning`); with
 *   `authenticate` (a token, Twilio's `X-Twilio-Signature`, your own check) an upgrade that
 *   fails is answered 401 and never becomes a WebSocket.
 *
 * ## Example
 * ```ts
 * import { mediaStreamServer } from 'svc-stream/telephony';
 *
 * mediaStreamServer({ port: 8080, preset: 'twilio', authenticate: { twilio: { authToken: process.env['TWILIO_AUTH_TOKEN']! } } }).subscribe((call) => {
 *   console.log('call', call.callId, call.track);
 *   call.audio$.subscribe({ complete: () => console.log(call.id, 'ended', call.stats) });
 * });
 * ```
 */
export function mediaStreamServer(options: MediaStreamServerOptions = {}): Observable<MediaStreamCall> {
  const fixedPreset = typeof options.preset === 'object' ? options.preset : options.preset && options.preset !== 'auto' ? MEDIA_STREAM_PRESETS[options.preset] : undefined;
  const wanted = new Set<MediaTrack>(options.tracks ?? ['inbound', 'outbound']);
  const interleaved = options.trackMode === 'interleaved';
  const frameMs = options.frameMs ?? DEFAULT_LIVE_FRAME_MS;
  if (!Number.isFinite(frameMs) || !(frameMs === 0 || frameMs >= 1)) throw new InputError('invalid_argument', `mediaStreamServer: frameMs must be 0 (no grouping) or at least 1, got ${frameMs}`, { path: 'frameMs' });
  const handle = workerHandle(options.worker);
  return new Observable<MediaStreamCall>((subscriber) => {
    const stats = options.stats ?? createMediaStreamServerStats();
    handle?.reportStats('mediaStreamServer', stats);
    const scheduler = options.scheduler ?? asyncScheduler;
    const grouping = frameMs > 0 ? { frameMs, scheduler } : undefined;
    let scratch = Buffer.allocUnsafe(1024);
    // What `decode` returns, reused message after message (no view per message).
    const decoded: DecodedPayload = { buf: scratch, bytes: 0 };
    const connections = new Set<MediaStreamConnection>();
    const maxConnections = options.maxConnections ?? DEFAULT_MEDIA_STREAM_MAX_CONNECTIONS;
    const warnOverCapacity = warnOnce(
      {
        code: 'max_connections',
        option: 'maxConnections',
        limit: maxConnections,
        message: `mediaStreamServer: a connection was closed with 1013 because ${maxConnections} are open (maxConnections); further refusals are counted in stats.overCapacity. Raise maxConnections to take more calls at once.`,
      },
      options.onWarning,
    );
    const warnDraining = warnOnce(
      { code: 'draining', option: 'lifecycle', limit: 0, message: 'mediaStreamServer: a connection was refused (HTTP 503, Retry-After) because the service is draining (it takes no new call); further refusals are counted in stats.refusedDraining.' },
      options.onWarning,
    );
    const lifecycle = options.lifecycle ?? handle?.lifecycle;
    const totals = new StreamTotals();
    const server = wsCallServer({
      host: options.host ?? '127.0.0.1',
      port: options.port ?? 0,
      path: options.path,
      maxPayload: options.maxPayload ?? DEFAULT_MEDIA_STREAM_MAX_PAYLOAD,
      maxConnections,
      overCapacity: 'close-1013',
      retryAfterS: RETRY_AFTER_S,
      onRequest: options.onRequest,
      worker: handle,
      scheduler,
      ...(options.authenticate
        ? {
            admit: async (req: IncomingMessage) => {
              const refusal = await checkUpgrade(req, options.authenticate!);
              if (refusal === undefined) return undefined;
              stats.unauthorized++;
              callUser(options.onRefused, refusal, req);
              return { status: '401 Unauthorized' };
            },
          }
        : {}),
      onOverCapacity: () => {
        stats.overCapacity++;
        warnOverCapacity();
      },
      onConnection: (ws) => onConnection(ws),
      onDraining: () => {
        stats.refusedDraining++;
        warnDraining();
      },
      onListening: (address) => {
        lifecycle?.ready();
        options.onListening?.(address);
      },
      onError: (err) => subscriber.error(new AudioSourceError('source_error', `media-stream server failed: ${err.message}`, { cause: err })),
    });

    const malformed = (reason: string, raw: string): void => {
      stats.malformed++;
      callUser(options.onMalformed, reason, raw.slice(0, 500));
    };
    const context: ConnectionContext = {
      fixedPreset,
      wanted,
      interleaved,
      maxSkewMs: options.maxSkewMs ?? 500,
      playoutDelayMs: options.playoutDelayMs,
      scheduler,
      grouping,
      stats,
      malformed,
      decode: (payload) => {
        // Every payload is decoded here first (messages are handled one at a time).
        const need = (payload.length / 4) * 3;
        if (need > scratch.length) scratch = Buffer.allocUnsafe(Math.max(need, scratch.length * 2));
        decoded.bytes = scratch.write(payload, 'base64');
        decoded.buf = scratch;
        return decoded;
      },
      emit: (call) => subscriber.next(call),
    };
    const onConnection = (ws: WebSocket): void => {
      stats.connections++;
      const connection: MediaStreamConnection = new MediaStreamConnection(ws, context, () => {
        for (const t of connection.trackStats()) totals.add(t);
        connections.delete(connection);
        attached?.changed();
      });
      connections.add(connection);
    };
    function* liveTracks(): Iterable<StreamStats> {
      for (const c of connections) yield* c.trackStats();
    }
    const attached = lifecycle?.attach({
      get inFlight() {
        return connections.size;
      },
      stopAccepting: () => server.drain(),
      endCalls: () => {
        for (const c of [...connections]) c.close(1001, 'going away: the service is shutting down');
      },
      metrics: () => mediaStreamMetrics(stats, connections.size, totals, liveTracks),
    });

    return () => {
      attached?.detach();
      for (const c of [...connections]) c.end();
      server.close();
    };
  });
}

/** The families of one media-stream server: its connections and messages, what it refused and why, and its tracks' packets. */
function mediaStreamMetrics(stats: MediaStreamServerStats, open: number, totals: StreamTotals, live: () => Iterable<StreamStats>): ServiceMetric[] {
  const one = (value: number) => [{ value }];
  return [
    { name: 'svc_stream_media_stream_connections_total', help: 'Provider connections accepted (WebSocket).', type: 'counter', samples: () => one(stats.connections) },
    { name: 'svc_stream_media_stream_connections_active', help: 'Provider connections open now.', type: 'gauge', samples: () => one(open) },
    { name: 'svc_stream_media_stream_messages_total', help: 'Messages received from the providers.', type: 'counter', samples: () => one(stats.messages) },
    { name: 'svc_stream_media_stream_malformed_total', help: 'Messages that could not be used.', type: 'counter', samples: () => one(stats.malformed) },
    {
      name: 'svc_stream_media_stream_refused_total',
      help: 'Connections refused, by reason: unauthorized (401), over_capacity (closed 1013), draining (503 while the service drains), oversized (closed 1009).',
      type: 'counter',
      labels: ['reason'],
      samples: () => [
        { labels: { reason: 'unauthorized' }, value: stats.unauthorized },
        { labels: { reason: 'over_capacity' }, value: stats.overCapacity },
        { labels: { reason: 'draining' }, value: stats.refusedDraining },
        { labels: { reason: 'oversized' }, value: stats.oversized },
      ],
    },
    ...totals.metrics('media-stream', live),
  ];
}
