// A server for Genesys Cloud AudioHook: WebSocket sessions authenticated by API key and HTTP
// message signature, each call's two sides (customer, agent) as the two channels of one call.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { asyncScheduler, Observable, type SchedulerLike } from 'rxjs';
import type { WebSocket } from 'ws';
import { AudioSourceError, InputError } from '../errors/index.js';
import { positiveInteger } from '../internal/positiveOption.js';
import { callUser } from '../internal/userCallback.js';
import type { LimitWarning, WarningHandler } from '../warnings.js';
import { AudioHookVerifier, DEFAULT_AUDIOHOOK_MIN_FAILURE_DELAY_MS, type AudioHookAuth, type AudioHookAuthFailure } from './audioHookAuth.js';
import { AudioHookConnection, type AudioHookCall, type AudioHookContext } from './AudioHookConnection.js';
import type { AudioHookChannel } from '../schema/audioHook.js';
import { AUDIOHOOK_RATE, type AudioHookFormat, type AudioHookNotice } from './audioHookState.js';
import { workerHandle, type CallWorker } from './callWorker.js';
import { warnOnce } from './limitWarning.js';
import { DEFAULT_LIVE_FRAME_MS } from './LiveAudio.js';
import { wsCallServer } from './wsCallServer.js';
import type { ServiceLifecycle } from '../service/lifecycle.js';
import type { ServiceMetric } from '../service/metric.js';

export type { AudioHookCall, AudioHookCallStats } from './AudioHookConnection.js';

/** Counters of the server, updated in place. */
export interface AudioHookServerStats {
  /** WebSocket connections taken. */
  connections: number;
  /** Text messages received. */
  messages: number;
  /** Binary messages taken as audio, and their bytes. */
  audioFrames: number;
  audioBytes: number;
  /** Messages of no use where they came (a `paused` while paused, audio after the end), let go. */
  ignored: number;
  /** Calls emitted (sessions opened with media). */
  calls: number;
  /** Connection probes answered (`open` of the null conversation): no call. */
  probes: number;
  /** Sessions ended by the client's close transaction. */
  closed: number;
  /** Sessions this server ended with `disconnect` (a protocol error, media it does not take, a shutdown). */
  disconnected: number;
  /** Sessions whose socket closed before a close transaction. */
  lost: number;
  /** Upgrades refused by `authenticate` (answered 401, no WebSocket). */
  unauthorized: number;
  /** Upgrades refused because `maxConnections` are open (answered 503 with Retry-After). */
  overCapacity: number;
  /** Upgrades refused while draining (503 with Retry-After). */
  refusedDraining: number;
  /** Upgrades refused because a session of the same id is open (409). */
  duplicateSessions: number;
  /** Connections closed with 1009 for a message over `maxPayload`. */
  oversized: number;
  /** Pauses and their total length, ms. */
  pauses: number;
  pausedMs: number;
  /** Spans the clients said they discarded, and their total length, ms. */
  discards: number;
  discardedMs: number;
  /** Of the pauses and discarded spans, what was filled with silence, ms. */
  filledMs: number;
  /** `reconnect` messages sent (a drain). */
  reconnectsAsked: number;
}

/** Fresh {@link AudioHookServerStats}, every counter at zero. */
export function createAudioHookServerStats(): AudioHookServerStats {
  return {
    connections: 0,
    messages: 0,
    audioFrames: 0,
    audioBytes: 0,
    ignored: 0,
    calls: 0,
    probes: 0,
    closed: 0,
    disconnected: 0,
    lost: 0,
    unauthorized: 0,
    overCapacity: 0,
    refusedDraining: 0,
    duplicateSessions: 0,
    oversized: 0,
    pauses: 0,
    pausedMs: 0,
    discards: 0,
    discardedMs: 0,
    filledMs: 0,
    reconnectsAsked: 0,
  };
}

/** Connections at once by default. */
export const DEFAULT_AUDIOHOOK_MAX_CONNECTIONS = 100;
/** Largest WebSocket message by default: text is at most 64 KiB by the protocol, audio frames a few KiB. */
export const DEFAULT_AUDIOHOOK_MAX_PAYLOAD = 256 * 1024;
/** Longest gap filled with silence by default, ms. */
export const DEFAULT_AUDIOHOOK_MAX_GAP_FILL_MS = 60_000;

/** Options of {@link audioHookServer}. */
export interface AudioHookServerOptions {
  /** Interface (default 127.0.0.1). */
  readonly host?: string | undefined;
  /** Port (default 0: any free port; see `onListening`). */
  readonly port?: number | undefined;
  /** Only accept upgrades on this path (default: any; others are answered 404). */
  readonly path?: string | undefined;
  /**
   * Who may connect: API keys with their client secrets (the request's signature is verified),
   * organizations, a check of your own. Default: anyone who can reach `host`. Set it whenever
   * the server listens beyond loopback.
   */
  readonly authenticate?: AudioHookAuth | undefined;
  /** Told about every refused upgrade, with what failed (counted in `stats.unauthorized`); never the key. */
  readonly onRefused?: ((failure: AudioHookAuthFailure, req: IncomingMessage) => void) | undefined;
  /** Formats taken (default both, the client's order of preference deciding): PCMU as `mulaw`, L16 as `s16le`. */
  readonly formats?: readonly AudioHookFormat[] | undefined;
  /** The sides wanted (default both, as the two channels of one call; one alone makes a one-channel call). */
  readonly channels?: readonly AudioHookChannel[] | undefined;
  /**
   * The longest pause or discarded span filled with silence, ms (default 60000), so the session's
   * time stays the call's. A longer one is not filled: the session's audio goes on from where it
   * stopped, and the gap is counted and said (`gaps`, `onNotice`). So is a gap that would make
   * the call's silence more than its received audio plus this bound. 0: never fill.
   */
  readonly maxGapFillMs?: number | undefined;
  /** Frames of audio sent to the service, ms (default 100; see docs/telephony.md, Frames). */
  readonly frameMs?: number | undefined;
  /** Connections at once (default 100). One more is answered 503 with Retry-After before the upgrade; the first time said through `onWarning`. */
  readonly maxConnections?: number | undefined;
  /** Largest WebSocket message, bytes (default 256 KiB): larger closes the connection with 1009. Text over 64 KiB is refused by the protocol (`disconnect`). */
  readonly maxPayload?: number | undefined;
  /** How long a connection may wait before its `open`, ms (default 10000): then `disconnect`. */
  readonly openTimeoutMs?: number | undefined;
  /** How long the client is waited for after `disconnect` (its `close`) or `closed` (its socket's close), ms (default 5000): then the socket is closed. */
  readonly closeTimeoutMs?: number | undefined;
  /** Seconds a 503 (full, draining) asks the client to wait before it retries (default 5). */
  readonly retryAfterS?: number | undefined;
  /**
   * Drain when this emits: from then on every upgrade is answered 503 with Retry-After, every
   * live session is sent `reconnect` (a client that reconnects moves its session to another
   * server; one that does not goes on here), and the observable completes once every connection
   * has ended. Unsubscribing still ends everything at once (`disconnect`, then the socket).
   */
  readonly drain?: Observable<unknown> | undefined;
  /**
   * The service's life cycle (`ServiceLifecycle`): the server attaches to it as a `CallServer`
   * and makes it `ready` once it listens. Draining, a new connection is answered 503 with
   * `Retry-After` before the upgrade (counted in `stats.refusedDraining`, told once through
   * `onWarning`, code `draining`) while the sessions open run on to their `close` (no
   * `reconnect` is asked: that is the `drain` option's move); forced (the drain deadline, a
   * second signal), each live session is sent `disconnect` and its call ends `shutdown`. Its
   * metrics: sessions open, opens and closes by how, refusals by reason, pauses and gaps.
   * Under `callWorkers`, the worker's own life cycle is used by default.
   */
  readonly lifecycle?: ServiceLifecycle | undefined;
  /**
   * Plain HTTP requests (not upgrades), before the server's own answer (426): return true when
   * you answered it (the operator's `/healthz`, `/readyz`, `/metrics` on the same port).
   */
  readonly onRequest?: ((req: IncomingMessage, res: ServerResponse) => boolean) | undefined;
  /** What the protocol says along the way (pauses, gaps, language updates, client errors, each session's end), with the session's id and its call if it has one. */
  readonly onNotice?: ((notice: AudioHookNotice, sessionId: string | undefined, call: AudioHookCall | undefined) => void) | undefined;
  /** Told once per subscription, the first time `maxConnections` refuses a connection (default: `process.emitWarning`). */
  readonly onWarning?: WarningHandler<LimitWarning> | undefined;
  /** Called with the bound address once listening. */
  readonly onListening?: ((address: AddressInfo) => void) | undefined;
  readonly stats?: AudioHookServerStats | undefined;
  /** Every timer (the failure delay, the waits for the client, frames): default `asyncScheduler`; its clock also dates signatures. */
  readonly scheduler?: SchedulerLike | undefined;
  /** The worker handle `callWorkers` gives each worker process (one port, connections dealt round-robin, `maxConnections` across them). */
  readonly worker?: CallWorker | undefined;
}

const UUID = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/;

/**
 * Accept Genesys Cloud AudioHook sessions and emit one {@link AudioHookCall} per call: the
 * customer's side (`external`) and the agent's (`internal`) as the two channels of one audio
 * stream, PCMU as `mulaw` (or L16 as `s16le`) at 8 kHz, ready for `analyzeCalls`.
 *
 * - Cold: each subscription starts its own server (port 0 picks a free one, reported through
 *   `onListening`); unsubscribing sends every live session `disconnect` and closes it.
 * - The protocol as published (version 2): `open` answered `opened` with the media chosen
 *   (returned exactly as offered), `ping`/`pong`, `paused`/`resumed` and `discarded` (their
 *   gaps filled with silence up to `maxGapFillMs` and said), `update`/`updated`,
 *   `close`/`closed`; `pause` and `resume` asked through `call.pause()`/`call.resume()`;
 *   `reconnect` on a drain. Sequence numbers are checked both ways: a gap, a malformed message,
 *   a text message over 64 KiB or audio while not active ends the session with `disconnect`.
 *   A connection probe (the null conversation) is answered and makes no call.
 * - A call's audio completes when its session ends, however it ends (`call.end` says how).
 * - Bounded: `authenticate` refuses with 401 before the upgrade, never sooner than 500 ms after
 *   the request; past `maxConnections` (100) or while draining, 503 with Retry-After; a session
 *   that never opens, or a client that does not close when asked, is cut after its timeout.
 *   The observable errors only when the server cannot listen.
 *
 * ## Example
 * ```ts
 * import { analyzeCalls, audioHookServer } from 'svc-stream/telephony';
 *
 * const calls$ = audioHookServer({
 *   host: '0.0.0.0',
 *   port: 8443,
 *   path: '/audiohook',
 *   authenticate: { apiKeys: { [process.env['AUDIOHOOK_API_KEY']!]: process.env['AUDIOHOOK_CLIENT_SECRET']! } },
 * });
 * analyzeCalls(calls$, { maxConcurrent: 10 }).subscribe((call) => {
 *   call.outcome$.subscribe((o) => console.log(call.call.conversationId, o.status, call.call.end));
 * });
 * ```
 */
export function audioHookServer(options: AudioHookServerOptions = {}): Observable<AudioHookCall> {
  const formats = options.formats ?? ['PCMU', 'L16'];
  const channels = options.channels ?? ['external', 'internal'];
  if (formats.length === 0 || formats.some((f) => f !== 'PCMU' && f !== 'L16')) throw new InputError('invalid_argument', `audioHookServer: formats must be PCMU and/or L16, got ${JSON.stringify(formats)}`, { path: 'formats' });
  if (channels.length === 0 || channels.some((c) => c !== 'external' && c !== 'internal') || new Set(channels).size !== channels.length) throw new InputError('invalid_argument', `audioHookServer: channels must be external and/or internal, got ${JSON.stringify(channels)}`, { path: 'channels' });
  const frameMs = options.frameMs ?? DEFAULT_LIVE_FRAME_MS;
  if (!Number.isFinite(frameMs) || !(frameMs === 0 || frameMs >= 1)) throw new InputError('invalid_argument', `audioHookServer: frameMs must be 0 (no grouping) or at least 1, got ${frameMs}`, { path: 'frameMs' });
  const maxGapFillMs = options.maxGapFillMs ?? DEFAULT_AUDIOHOOK_MAX_GAP_FILL_MS;
  if (!(maxGapFillMs >= 0)) throw new InputError('invalid_argument', `audioHookServer: maxGapFillMs must be 0 or more, got ${maxGapFillMs}`, { path: 'maxGapFillMs' });
  const maxConnections = positiveInteger('audioHookServer', 'maxConnections', options.maxConnections, DEFAULT_AUDIOHOOK_MAX_CONNECTIONS);
  const openTimeoutMs = positiveInteger('audioHookServer', 'openTimeoutMs', options.openTimeoutMs, 10_000);
  const closeTimeoutMs = positiveInteger('audioHookServer', 'closeTimeoutMs', options.closeTimeoutMs, 5_000);
  const retryAfterS = positiveInteger('audioHookServer', 'retryAfterS', options.retryAfterS, 5);
  const minFailureDelayMs = options.authenticate?.minFailureDelayMs ?? DEFAULT_AUDIOHOOK_MIN_FAILURE_DELAY_MS;
  const handle = workerHandle(options.worker);
  return new Observable<AudioHookCall>((subscriber) => {
    const stats = options.stats ?? createAudioHookServerStats();
    handle?.reportStats('audioHookServer', stats);
    const scheduler = options.scheduler ?? asyncScheduler;
    const verifier = options.authenticate ? new AudioHookVerifier(options.authenticate, () => scheduler.now()) : undefined;
    const connections = new Set<AudioHookConnection>();
    let draining = false;
    const lifecycle = options.lifecycle ?? handle?.lifecycle;
    const warnDraining = warnOnce(
      { code: 'draining', option: 'lifecycle', limit: 0, message: `audioHookServer: a connection was refused (503, Retry-After ${retryAfterS}) because the service is draining (it takes no new call); further refusals are counted in stats.refusedDraining.` },
      options.onWarning,
    );
    const warnOverCapacity = warnOnce(
      {
        code: 'max_connections',
        option: 'maxConnections',
        limit: maxConnections,
        message: `audioHookServer: a connection was refused (503, Retry-After ${retryAfterS}) because ${maxConnections} are open (maxConnections); further refusals are counted in stats.overCapacity. Raise maxConnections to take more calls at once.`,
      },
      options.onWarning,
    );
    const ctx: AudioHookContext = {
      rules: { formats, channels, maxFillSamples: Math.floor((maxGapFillMs * AUDIOHOOK_RATE) / 1000) },
      scheduler,
      grouping: frameMs > 0 ? { frameMs, scheduler } : undefined,
      openTimeoutMs,
      closeTimeoutMs,
      stats,
      emit: (call) => subscriber.next(call),
      notice: (notice, sessionId, call) => callUser(options.onNotice, notice, sessionId, call),
    };
    const openSessions = (): Set<string> => new Set([...connections].map((c) => c.sessionId?.toLowerCase()).filter((id): id is string => id !== undefined));
    const maybeComplete = (): void => {
      if (draining && connections.size === 0) subscriber.complete();
    };

    const server = wsCallServer({
      host: options.host ?? '127.0.0.1',
      port: options.port ?? 0,
      path: options.path,
      maxPayload: options.maxPayload ?? DEFAULT_AUDIOHOOK_MAX_PAYLOAD,
      maxConnections,
      overCapacity: 'http-503',
      retryAfterS,
      onRequest: options.onRequest,
      worker: handle,
      scheduler,
      admit: async (req: IncomingMessage) => {
        const arrived = scheduler.now();
        const failure = verifier ? await verifier.check(req) : undefined;
        if (failure) {
          stats.unauthorized++;
          callUser(options.onRefused, failure, req);
          // Whatever failed, the answer takes as long: no timing tells which check it was.
          return { status: '401 Unauthorized', notBefore: arrived + minFailureDelayMs };
        }
        const id = req.headers['audiohook-session-id'];
        if (typeof id === 'string' && UUID.test(id) && openSessions().has(id.toLowerCase())) {
          stats.duplicateSessions++;
          return { status: '409 Conflict' };
        }
        return undefined;
      },
      onOverCapacity: () => {
        stats.overCapacity++;
        warnOverCapacity();
      },
      onDraining: () => {
        stats.refusedDraining++;
        warnDraining();
      },
      onConnection: (ws: WebSocket, req: IncomingMessage) => {
        stats.connections++;
        const connection: AudioHookConnection = new AudioHookConnection(ws, req, ctx, () => {
          connections.delete(connection);
          attached?.changed();
          maybeComplete();
        });
        connections.add(connection);
      },
      onListening: (address) => {
        lifecycle?.ready();
        options.onListening?.(address);
      },
      onError: (err) => subscriber.error(new AudioSourceError('source_error', `AudioHook server failed: ${err.message}`, { cause: err })),
    });

    // The server's two moves in a drain: take no new session (and ask the live ones to move),
    // then, if it must, end those still here.
    const stopAccepting = (): void => {
      if (draining) return;
      draining = true;
      server.drain();
      for (const c of connections) {
        if (!c.live) continue;
        stats.reconnectsAsked++;
        c.input({ type: 'reconnect', info: 'this server is draining: reconnect to continue the session elsewhere' });
      }
      maybeComplete();
    };
    const endCalls = (): void => {
      for (const c of [...connections]) c.shutdown();
    };
    const drained = options.drain?.subscribe(stopAccepting);
    // The service's drain: no new session, the live ones run to their close; forced, ended.
    const attached = lifecycle?.attach({
      get inFlight() {
        return connections.size;
      },
      stopAccepting: () => server.drain(),
      endCalls,
      metrics: () => audioHookMetrics(stats, connections.size),
    });

    return () => {
      attached?.detach();
      drained?.unsubscribe();
      endCalls();
      server.close();
    };
  });
}

/** The families of one AudioHook server, from its own counters: sessions, how they ended, what it refused and why. */
function audioHookMetrics(stats: AudioHookServerStats, open: number): ServiceMetric[] {
  const one = (value: number) => [{ value }];
  return [
    { name: 'svc_stream_audiohook_connections_total', help: 'AudioHook WebSocket connections taken.', type: 'counter', samples: () => one(stats.connections) },
    { name: 'svc_stream_audiohook_connections_active', help: 'AudioHook connections open now.', type: 'gauge', samples: () => one(open) },
    { name: 'svc_stream_audiohook_opens_total', help: 'Sessions opened with media (each one call).', type: 'counter', samples: () => one(stats.calls) },
    { name: 'svc_stream_audiohook_probes_total', help: 'Connection probes answered (the null conversation): no call.', type: 'counter', samples: () => one(stats.probes) },
    {
      name: 'svc_stream_audiohook_closes_total',
      help: "Sessions ended, by how: closed (the client's close transaction), disconnected (this server sent disconnect), lost (the socket closed without a close).",
      type: 'counter',
      labels: ['how'],
      samples: () => [
        { labels: { how: 'closed' }, value: stats.closed },
        { labels: { how: 'disconnected' }, value: stats.disconnected },
        { labels: { how: 'lost' }, value: stats.lost },
      ],
    },
    {
      name: 'svc_stream_audiohook_refused_total',
      help: 'Connections refused, by reason: unauthorized (401), over_capacity (503), draining (503 while the service drains), duplicate_session (409), oversized (closed 1009).',
      type: 'counter',
      labels: ['reason'],
      samples: () => [
        { labels: { reason: 'unauthorized' }, value: stats.unauthorized },
        { labels: { reason: 'over_capacity' }, value: stats.overCapacity },
        { labels: { reason: 'draining' }, value: stats.refusedDraining },
        { labels: { reason: 'duplicate_session' }, value: stats.duplicateSessions },
        { labels: { reason: 'oversized' }, value: stats.oversized },
      ],
    },
    { name: 'svc_stream_audiohook_messages_total', help: 'Text messages received.', type: 'counter', samples: () => one(stats.messages) },
    { name: 'svc_stream_audiohook_audio_bytes_total', help: 'Audio bytes received (binary messages).', type: 'counter', samples: () => one(stats.audioBytes) },
    { name: 'svc_stream_audiohook_pauses_total', help: 'Pauses the clients announced.', type: 'counter', samples: () => one(stats.pauses) },
    { name: 'svc_stream_audiohook_gap_seconds_total', help: 'Audio not received, by kind: paused, discarded (the client said), filled (of those, filled with silence).', type: 'counter', labels: ['kind'], samples: () => [
      { labels: { kind: 'paused' }, value: stats.pausedMs / 1000 },
      { labels: { kind: 'discarded' }, value: stats.discardedMs / 1000 },
      { labels: { kind: 'filled' }, value: stats.filledMs / 1000 },
    ] },
  ];
}
