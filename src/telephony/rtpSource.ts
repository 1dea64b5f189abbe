// RTP over UDP in, one call leg per SSRC out: the socket (bind, worker ports, teardown), the
// options' checks and the warnings. Each datagram's path to its leg is RtpLegs.ts's; the
// sender check is allowedSources.ts's; each leg's packets go through its own jitter buffer.
import dgram from 'node:dgram';
import type { AddressInfo } from 'node:net';
import { asyncScheduler, Observable, type SchedulerLike } from 'rxjs';
import { AudioSourceError, InputError } from '../errors/index.js';
import { positiveInteger } from '../internal/positiveOption.js';
import type { LimitWarning, PayloadTypeWarning, WarningHandler } from '../warnings.js';
import { sourceFilter } from './allowedSources.js';
import { workerHandle, type CallWorker } from './callWorker.js';
import { warnOnce } from './limitWarning.js';
import { DEFAULT_LIVE_FRAME_MS } from './LiveAudio.js';
import { PayloadTypeGuesser } from './PayloadTypeGuesser.js';
import { resolvePayloadType, type PayloadTypeSpec } from './payloadTypes.js';
import { createRtpSourceStats, RtpLegs, type CallLeg, type RtpSourceStats } from './RtpLegs.js';
import type { ServiceLifecycle } from '../service/lifecycle.js';
import type { ServiceMetric } from '../service/metric.js';

/** Legs at once by default: each is a jitter buffer and, through `analyzeCalls`, a session. */
export const DEFAULT_MAX_LEGS = 64;

/** Options of {@link rtpSource}: bind address, dynamic payload types, jitter and idle bounds, socket buffer, counters, ffmpeg and scheduler. */
export interface RtpSourceOptions {
  /** Interface to bind (default 127.0.0.1). */
  readonly host?: string | undefined;
  /** UDP port (default 0: any free port; see `onListening`). */
  readonly port?: number | undefined;
  /** Dynamic payload types, e.g. `{ 96: { codec: 'L16', rate: 16000 }, 97: { codec: 'opus' } }`; may override static ones. */
  readonly payloadTypes?: Readonly<Record<number, PayloadTypeSpec>> | undefined;
  /** Longest wait for a missing packet before it is declared lost, ms (default 60). */
  readonly playoutDelayMs?: number | undefined;
  /** A leg ends after this long without a packet, ms (default 5000). */
  readonly idleTimeoutMs?: number | undefined;
  /** Most packets held behind a gap (default 64). */
  readonly maxHeldPackets?: number | undefined;
  /** Called with the bound address once listening (the port, when port 0 was asked). */
  readonly onListening?: ((address: AddressInfo) => void) | undefined;
  /** Socket receive buffer, bytes (default: the OS's). Raise it for many calls. */
  readonly recvBufferSize?: number | undefined;
  /** Live counters of the socket. */
  readonly stats?: RtpSourceStats | undefined;
  /** ffmpeg binary for payload types that need decoding (G.722, L16 at other rates). */
  readonly ffmpegPath?: string | undefined;
  /** Scheduler for every timer (default `asyncScheduler`). */
  readonly scheduler?: SchedulerLike | undefined;
  /** Called with each datagram's arrival before parsing (instrumentation). */
  readonly onDatagram?: (bytes: Buffer, ssrc: number | undefined) => void;
  /** The socket, for the edge (default `dgram.createSocket('udp4')`). */
  readonly socketFactory?: (() => dgram.Socket) | undefined;
  /**
   * Most legs at once (default 64). A packet that would start one more is dropped and counted
   * in `stats.refusedLegs`; a place frees when a leg ends (`idleTimeoutMs` without packets).
   * The first refusal is reported once through `onWarning`.
   */
  readonly maxLegs?: number | undefined;
  /**
   * Told once per subscription, the first time `maxLegs` refuses a leg (code `max_legs`, with the
   * option to raise). Default: `process.emitWarning` (printed once to stderr, code
   * `SVC_STREAM_MAX_LEGS`). Later refusals are only counted in `stats.refusedLegs`.
   */
  readonly onWarning?: WarningHandler<LimitWarning | PayloadTypeWarning> | undefined;
  /**
   * Frames of audio, ms (default 100): a leg's 20 ms packets are
   * joined into frames of `frameMs` before the session sends them, five times fewer frames
   * (sends, masks, syscalls) than one per packet. The cost is latency: a packet's audio reaches
   * the service at most `frameMs` later than it would alone (about half that on average; a
   * frame that is not full goes within `frameMs` of its first packet, from the process's one
   * timer wheel, and at the end of the call). `20` (or 0: each packet as it is released) gives
   * the lowest latency. Raw codecs only (G.711, L16); Opus and ffmpeg-decoded legs are not grouped.
   */
  readonly frameMs?: number | undefined;
  /**
   * Take datagrams only from these senders: IP addresses (`'10.0.0.5'`; IPv4-mapped IPv6 forms
   * match their IPv4 address), or a predicate on the sender. Others are dropped before parsing and
   * counted in `stats.disallowedSource`. Default: any sender.
   */
  readonly allowedSources?: readonly string[] | ((remote: { readonly address: string; readonly port: number }) => boolean) | undefined;
  /**
   * The worker handle `callWorkers` gives each worker process. Each worker then listens on its
   * own port, `port + index` (port 0: a free port each, reported through `onListening`), unless
   * `reusePort`; `maxLegs` bounds the legs of every worker together (a new SSRC waits for the
   * primary's place, its first datagrams kept meanwhile); `stats` add up in the primary.
   */
  readonly worker?: CallWorker | undefined;
  /**
   * Share one port between the processes that bind it (`SO_REUSEPORT`; the kernel deals each
   * sender's datagrams to one socket by address hash). Node 22.12 or later (an InputError
   * before): for several workers on one port. A worker restarted after a crash changes the
   * deal, so calls may move to another worker and go on there as a new leg; one port per worker
   * (the default) does not.
   */
  readonly reusePort?: boolean | undefined;
  /**
   * The service's life cycle (`ServiceLifecycle`): the source attaches to it as a `CallServer`
   * and makes it `ready` once it listens. Draining, a new SSRC's packets are dropped (counted in
   * `stats.refusedDraining`, told once through `onWarning`, code `draining`) while the legs
   * running go on; forced, every leg's audio ends. Its metrics: datagrams, legs, packets dropped
   * by reason, and the legs' packets (received, lost, late, reordered, duplicated) and jitter.
   * Under `callWorkers`, the worker's own life cycle is used by default.
   */
  readonly lifecycle?: ServiceLifecycle | undefined;
}

/** Whether this Node has dgram's `reusePort` (22.12 and later, 23.1 and later). */
export function hasReusePort(version = process.versions.node): boolean {
  const [major = 0, minor = 0] = version.split('.').map(Number);
  return major > 23 || (major === 23 && minor >= 1) || (major === 22 && minor >= 12);
}

/**
 * Listen for RTP on a UDP port and emit one {@link CallLeg} per SSRC.
 *
 * - Cold: each subscription binds its own socket (port 0 picks a free one, reported through
 *   `onListening`); unsubscribing closes it and ends every leg's audio.
 * - A leg starts on the first audio packet of a new SSRC. PCMU (0) and PCMA (8) pass through as
 *   mulaw/alaw 8000 Hz, L16 (10, 11 and dynamic types at a service rate) as s16be; G.722 and L16 at
 *   other rates are decoded by ffmpeg to s16le; Opus is wrapped in Ogg. DTMF (telephone-event)
 *   and comfort noise (13) take their sequence slot and are dropped and counted; RTCP on the same
 *   port is ignored and counted.
 * - Each leg has a jitter buffer (`JitterBuffer`): sequence numbers extended across wraparound,
 *   reordering within `playoutDelayMs`, duplicates and late packets dropped, lost packets and
 *   timestamp gaps filled with codec silence, so the leg's audio lasts as long as its timestamps.
 * - Bounded: at most `maxLegs` (64) legs at once, packets of further SSRCs dropped and counted
 *   (`refusedLegs`), the first refusal reported once (`onWarning`); with `allowedSources`, datagrams from other senders are dropped unparsed.
 * - A leg's audio completes after `idleTimeoutMs` without packets. The source itself never
 *   completes; it errors with `AudioSourceError('source_error')` when the socket fails to bind.
 * - Every timer goes through `scheduler`.
 *
 * ## Example
 * ```ts
 * import { rtpSource } from 'svc-stream/telephony';
 *
 * // ffmpeg -re -i samples/call.wav -ar 8000 -ac 1 -acodec pcm_mulaw -f rtp rtp://127.0.0.1:5004
 * rtpSource({ port: 5004 }).subscribe((leg) => {
 *   console.log('call leg', leg.id, leg.codec.name);
 *   leg.audio$.subscribe({ complete: () => console.log(leg.id, 'ended', leg.stats) });
 * });
 * ```
 */
export function rtpSource(options: RtpSourceOptions = {}): Observable<CallLeg> {
  const payloadTypes = options.payloadTypes ?? {};
  // Fail early on a bad map, not at the first packet.
  for (const pt of Object.keys(payloadTypes)) resolvePayloadType(Number(pt), payloadTypes);
  const maxLegs = positiveInteger('rtpSource', 'maxLegs', options.maxLegs, DEFAULT_MAX_LEGS);
  const allowed = sourceFilter(options.allowedSources);
  const frameMs = options.frameMs ?? DEFAULT_LIVE_FRAME_MS;
  if (!Number.isFinite(frameMs) || !(frameMs === 0 || frameMs >= 1)) throw new InputError('invalid_argument', `rtpSource: frameMs must be 0 (no grouping) or at least 1, got ${frameMs}`, { path: 'frameMs' });
  const handle = workerHandle(options.worker);
  const reusePort = options.reusePort === true;
  if (reusePort && !hasReusePort()) {
    throw new InputError('invalid_argument', `rtpSource: reusePort needs Node 22.12 or later (this is ${process.versions.node}); give each worker its own port instead (the default with a worker)`, { path: 'reusePort' });
  }
  // One port per worker (port, port + 1, …) unless they share one through reusePort; 0 stays 0 (each its own free port).
  const port = handle !== undefined && !reusePort && (options.port ?? 0) > 0 ? options.port! + handle.index : options.port ?? 0;
  return new Observable<CallLeg>((subscriber) => {
    const stats = options.stats ?? createRtpSourceStats();
    const scheduler = options.scheduler ?? asyncScheduler;
    const socket = options.socketFactory?.() ?? dgram.createSocket({ type: 'udp4', ...(reusePort ? { reusePort: true } : {}) } as dgram.SocketOptions);
    handle?.reportStats('rtpSource', stats);
    const warnRefused = warnOnce(
      {
        code: 'max_legs',
        option: 'maxLegs',
        limit: maxLegs,
        message: `rtpSource: a new call leg was refused because ${maxLegs} legs are running (maxLegs); further refusals are counted in stats.refusedLegs. Raise maxLegs to take more calls at once.`,
      },
      options.onWarning,
    );
    // A dynamic payload type nobody mapped: told from its packets where they leave no doubt, said once either way.
    const guesser = new PayloadTypeGuesser<[Buffer, dgram.RemoteInfo]>(scheduler, (v) => {
      const from = v.kind === 'mapped' && v.held[0] ? ` (from ${v.held[0][1].address}:${v.held[0][1].port})` : '';
      warnOnce(
        v.kind === 'mapped'
          ? { code: 'inferred_payload_type', option: 'payloadTypes', payloadType: v.payloadType, mapping: v.mapping, message: `rtpSource: payload type ${v.payloadType}${from} is not mapped; told from its packets (${v.evidence}), it is taken as ${v.mapping}. Map it in payloadTypes to be sure.` }
          : { code: 'unmapped_payload_type', option: 'payloadTypes', payloadType: v.payloadType, mapping: undefined, message: `rtpSource: payload type ${v.payloadType} ${v.payloadType < 96 ? v.reason : `is not mapped and ${v.reason}`}; its packets are dropped and counted in stats.unknownPayloadType. Map it in payloadTypes (e.g. { ${v.payloadType}: { codec: 'PCMU', rate: 16000 } }; PCMA, L16 and opus likewise).` },
        options.onWarning,
      )();
      if (v.kind === 'unknown') stats.unknownPayloadType += v.dropped;
      if (v.kind !== 'mapped' || closed) return;
      legs.payloadTypes = { ...legs.payloadTypes, [v.payloadType]: v.spec };
      for (const [held, from] of v.held) onMessage(held, from, true);
    });
    let closed = false;
    const warnDraining = warnOnce(
      { code: 'draining', option: 'lifecycle', limit: 0, message: 'rtpSource: a new call leg was refused because the service is draining (it takes no new call); further refusals are counted in stats.refusedDraining.' },
      options.onWarning,
    );
    const lifecycle = options.lifecycle ?? handle?.lifecycle;
    const legs: RtpLegs = new RtpLegs(
      { settings: options, stats, scheduler, frameMs, maxLegs, handle, guesser, warnRefused, warnDraining, changed: () => attached?.changed(), emit: (leg) => subscriber.next(leg) },
      payloadTypes,
    );
    const attached = lifecycle?.attach({
      get inFlight() {
        return legs.inFlight;
      },
      stopAccepting: () => legs.stopAccepting(),
      endCalls: () => legs.stop(),
      metrics: () => rtpMetrics(stats, legs),
    });

    // `replayed`: a datagram held while its payload type was being told, counted when it came.
    const onMessage = (msg: Buffer, rinfo: dgram.RemoteInfo, replayed = false): void => {
      if (!replayed) stats.datagrams++;
      if (allowed && !allowed(rinfo)) {
        stats.disallowedSource++;
        return;
      }
      legs.take(msg, rinfo, replayed);
    };

    socket.on('error', (err) => {
      if (closed) return;
      closed = true;
      legs.stop(err);
      subscriber.error(new AudioSourceError('source_error', `RTP socket failed: ${err.message}`, { cause: err }));
    });
    const bind = (): void => {
      try {
        // Exclusive: in a node:cluster worker the socket is this worker's own, never one handle
        // shared through the primary (which would deal one call's datagrams out to every worker).
        socket.bind({ address: options.host ?? '127.0.0.1', port, exclusive: true }, () => {
          if (options.recvBufferSize) socket.setRecvBufferSize(options.recvBufferSize);
          const address = socket.address();
          handle?.listening(address.port);
          lifecycle?.ready();
          options.onListening?.(address);
        });
      } catch (err) {
        subscriber.error(new InputError('invalid_argument', `cannot bind RTP socket: ${(err as Error).message}`));
      }
    };
    socket.on('message', onMessage);
    bind();

    return () => {
      closed = true;
      legs.stop();
      attached?.detach();
      guesser.stop();
      try {
        socket.close();
      } catch {
        /* already closed */
      }
    };
  });
}

/** The families of one RTP socket: its datagrams and legs, what it dropped and why, and its legs' packets. */
function rtpMetrics(stats: RtpSourceStats, legs: RtpLegs): ServiceMetric[] {
  const one = (value: number) => [{ value }];
  return [
    { name: 'svc_stream_rtp_datagrams_total', help: 'UDP datagrams received on the RTP socket.', type: 'counter', samples: () => one(stats.datagrams) },
    { name: 'svc_stream_rtp_rtcp_total', help: 'RTCP packets received on the RTP socket (ignored).', type: 'counter', samples: () => one(stats.rtcp) },
    { name: 'svc_stream_rtp_legs_started_total', help: 'Call legs (SSRCs) started.', type: 'counter', samples: () => one(stats.legs) },
    { name: 'svc_stream_rtp_legs_active', help: 'Call legs running now.', type: 'gauge', samples: () => one(legs.inFlight) },
    {
      name: 'svc_stream_rtp_dropped_total',
      help: 'Datagrams dropped before reaching a leg, by reason: malformed, unknown_payload_type, non_audio_before_leg, max_legs (a new leg over --max-legs), draining (a new leg while the service drains), disallowed_source.',
      type: 'counter',
      labels: ['reason'],
      samples: () => [
        { labels: { reason: 'malformed' }, value: stats.malformed },
        { labels: { reason: 'unknown_payload_type' }, value: stats.unknownPayloadType },
        { labels: { reason: 'non_audio_before_leg' }, value: stats.nonAudioBeforeLeg },
        { labels: { reason: 'max_legs' }, value: stats.refusedLegs },
        { labels: { reason: 'draining' }, value: stats.refusedDraining },
        { labels: { reason: 'disallowed_source' }, value: stats.disallowedSource },
      ],
    },
    ...legs.totals.metrics('rtp', () => legs.liveStats()),
  ];
}
