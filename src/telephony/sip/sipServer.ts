// `sipServer`: calls answered by the library. Options, counters and the Observable; the user
// agent server itself (transactions, dialogs, offer and answer) is SipUserAgent.ts's.
import { Observable, asyncScheduler, type SchedulerLike } from 'rxjs';
import { InputError, AudioSourceError } from '../../errors/index.js';
import { positiveInteger } from '../../internal/positiveOption.js';
import type { LimitWarning, WarningHandler } from '../../warnings.js';
import { workerHandle, type CallWorker } from '../callWorker.js';
import type { CallServer, ServiceLifecycle } from '../../service/lifecycle.js';
import type { ServiceMetric } from '../../service/metric.js';
import { DEFAULT_LIVE_FRAME_MS } from '../LiveAudio.js';
import type { SipDigestAuth } from './digestAuth.js';
import type { SipCall } from './sipCall.js';
import { DEFAULT_SIP_CODECS, type SipCodecName } from './sipCodecs.js';
import { DEFAULT_RTP_PORTS, type PortRange } from './rtpPorts.js';
import { DEFAULT_SIP_LIMITS } from './sipMessage.js';
import { SipUserAgent, type SipRefusal } from './SipUserAgent.js';

/** Counters of the server, updated in place (flat numbers: they add up across workers). */
export interface SipServerStats {
  /** Messages received (datagrams, and messages cut from TCP streams). */
  messages: number;
  /** Messages refused unread (every one also in the counter of its reason below). */
  malformed: number;
  tooLarge: number;
  lineTooLong: number;
  tooManyHeaders: number;
  badStartLine: number;
  unsupportedVersion: number;
  badHeader: number;
  missingHeader: number;
  badCseq: number;
  badMaxForwards: number;
  badContentLength: number;
  badVia: number;
  badAddress: number;
  /** Messages from a source not in `allowedSources`, dropped unanswered. */
  disallowedSource: number;
  /** Requests answered 401 (no or wrong credentials). */
  unauthorized: number;
  /** New INVITEs. */
  invites: number;
  /** Calls answered 200. */
  answered: number;
  /** Calls now (answered or being answered, not ended): a level. */
  running: number;
  /** Server transactions held now (each kept 32 s after its final response at most, RFC 3261's 64·T1): a level that a flood raises and time brings down. */
  transactions: number;
  /** INVITEs refused because `maxCalls` calls were running (503 with Retry-After, or 486). */
  busy: number;
  /** INVITEs refused while draining (503 with Retry-After). */
  drainRefused: number;
  /** INVITEs refused for their offer (488: no codec we take; 415: a body we do not read; 400: SDP or metadata unreadable). */
  notAcceptable: number;
  /** INVITEs answered 503 because no RTP port could be bound. */
  noPorts: number;
  /** INVITEs cancelled before the answer (487). */
  cancelled: number;
  /** Requests for a dialog or transaction we do not know (481). */
  unknownDialog: number;
  /** Requests answered 405, 420 or 400 otherwise. */
  otherRefused: number;
  /** Retransmitted requests absorbed (answered again, not handled again). */
  retransmissions: number;
  /** OPTIONS answered. */
  options: number;
  /** Re-INVITEs and UPDATEs in a dialog (holds, unholds, SIPREC metadata updates). */
  updates: number;
  /** Calls ended by the caller's BYE. */
  byes: number;
  /** Calls ended by `rtpTimeoutMs` without RTP. */
  rtpTimeouts: number;
  /** Calls ended because our 200 was never ACKed; and final refusals never ACKed (Timer H). */
  ackTimeouts: number;
  /** Calls ended by `hangUp()`, `endCalls` or unsubscribing. */
  localHangups: number;
  /** Our BYEs that got no answer (Timer F). */
  byeTimeouts: number;
  /** Responses that match no request of ours. */
  strayResponses: number;
  /** TCP connections accepted, and refused over `maxConnections`. */
  tcpConnections: number;
  tcpRefused: number;
}

/** Fresh {@link SipServerStats}, every counter at zero. */
export function createSipServerStats(): SipServerStats {
  return {
    messages: 0,
    malformed: 0,
    tooLarge: 0,
    lineTooLong: 0,
    tooManyHeaders: 0,
    badStartLine: 0,
    unsupportedVersion: 0,
    badHeader: 0,
    missingHeader: 0,
    badCseq: 0,
    badMaxForwards: 0,
    badContentLength: 0,
    badVia: 0,
    badAddress: 0,
    disallowedSource: 0,
    unauthorized: 0,
    invites: 0,
    answered: 0,
    running: 0,
    transactions: 0,
    busy: 0,
    drainRefused: 0,
    notAcceptable: 0,
    noPorts: 0,
    cancelled: 0,
    unknownDialog: 0,
    otherRefused: 0,
    retransmissions: 0,
    options: 0,
    updates: 0,
    byes: 0,
    rtpTimeouts: 0,
    ackTimeouts: 0,
    localHangups: 0,
    byeTimeouts: 0,
    strayResponses: 0,
    tcpConnections: 0,
    tcpRefused: 0,
  };
}

/** RFC 3261's timer values, ms (§17.1.1.1, table 4): tests shorten them or run them on virtual time. */
export interface SipTimers {
  /** Round-trip estimate (default 500). */
  readonly t1: number;
  /** Longest retransmit interval of a non-INVITE request and of an INVITE's responses (default 4000). */
  readonly t2: number;
  /** Longest a message stays in the network (default 5000). */
  readonly t4: number;
}

export const DEFAULT_SIP_TIMERS: SipTimers = { t1: 500, t2: 4000, t4: 5000 };

/** What a SIP server attached to a service life cycle offers it (`CallServer`): calls in flight; stop accepting (new INVITEs and OPTIONS answered 503 with Retry-After); end them (BYE, their audio fails with the `shutdown` error); its metrics. */
export type SipServerControl = CallServer & {
  /** The SIP server's metric families (transactions, refusals by code, calls), read at each scrape. */
  metrics(): readonly ServiceMetric[];
};

/** The metric families of a server's counters. */
export function sipMetrics(stats: Readonly<SipServerStats>): ServiceMetric[] {
  const by = (label: string, pairs: ReadonlyArray<readonly [string, keyof SipServerStats]>) => () => pairs.map(([v, k]) => ({ labels: { [label]: v }, value: stats[k] }));
  const one = (k: keyof SipServerStats) => () => [{ value: stats[k] }];
  return [
    { name: 'svc_stream_sip_messages_total', help: 'SIP messages received', type: 'counter', samples: one('messages') },
    { name: 'svc_stream_sip_invites_total', help: 'new INVITEs', type: 'counter', samples: one('invites') },
    { name: 'svc_stream_sip_calls_answered_total', help: 'calls answered 200', type: 'counter', samples: one('answered') },
    {
      name: 'svc_stream_sip_invites_refused_total',
      help: 'INVITEs refused, by reason',
      type: 'counter',
      labels: ['reason'],
      samples: by('reason', [['busy', 'busy'], ['draining', 'drainRefused'], ['not_acceptable', 'notAcceptable'], ['no_ports', 'noPorts'], ['unauthorized', 'unauthorized'], ['cancelled', 'cancelled']]),
    },
    {
      name: 'svc_stream_sip_calls_ended_total',
      help: 'calls ended, by how',
      type: 'counter',
      labels: ['reason'],
      samples: by('reason', [['bye', 'byes'], ['rtp_timeout', 'rtpTimeouts'], ['ack_timeout', 'ackTimeouts'], ['local', 'localHangups']]),
    },
    {
      name: 'svc_stream_sip_messages_refused_total',
      help: 'messages dropped unread or unanswered, by reason',
      type: 'counter',
      labels: ['reason'],
      samples: by('reason', [['too_large', 'tooLarge'], ['line_too_long', 'lineTooLong'], ['too_many_headers', 'tooManyHeaders'], ['bad_start_line', 'badStartLine'], ['unsupported_version', 'unsupportedVersion'], ['bad_header', 'badHeader'], ['missing_header', 'missingHeader'], ['bad_cseq', 'badCseq'], ['bad_max_forwards', 'badMaxForwards'], ['bad_content_length', 'badContentLength'], ['bad_via', 'badVia'], ['bad_address', 'badAddress'], ['disallowed_source', 'disallowedSource']]),
    },
    { name: 'svc_stream_sip_calls', help: 'calls answered or being answered now', type: 'gauge', samples: one('running') },
    { name: 'svc_stream_sip_transactions', help: 'server transactions held now', type: 'gauge', samples: one('transactions') },
  ];
}

/** SIPREC options. */
export interface SipRecOptions {
  /** `stereo` (default): a call's two streams become one session, a channel per participant; `separate`: a session per stream. */
  readonly mode?: 'stereo' | 'separate' | undefined;
}

/** Options of {@link sipServer}. */
export interface SipServerOptions {
  /** Interface for SIP and RTP (default 127.0.0.1). */
  readonly host?: string | undefined;
  /** SIP port, UDP and TCP (default 5060; 0: a free one, see `onListening`). */
  readonly port?: number | undefined;
  /** Transports (default both). */
  readonly transports?: readonly ('udp' | 'tcp')[] | undefined;
  /** The address peers reach us at, in Contact and SDP (default `host`; required when `host` is 0.0.0.0 or ::). */
  readonly publicAddress?: string | undefined;
  /** UDP ports for RTP, even ones used (default 20000–29999). Under `worker`, each worker takes its slice. */
  readonly rtpPorts?: PortRange | undefined;
  /** Codecs we take, in order of preference (default PCMU, PCMA, L16, G722; G.722 is decoded by ffmpeg). */
  readonly codecs?: readonly SipCodecName[] | undefined;
  /** Calls at once (default 100). One more INVITE is answered per `whenFull`; the first refusal is reported through `onWarning`. */
  readonly maxCalls?: number | undefined;
  /** Beyond `maxCalls`: `503` with Retry-After (default: the caller's trunk tries another server) or `486` Busy Here. */
  readonly whenFull?: '503' | '486' | undefined;
  /** Retry-After of a 503, seconds (default 5). */
  readonly retryAfterS?: number | undefined;
  /** A call ends after this long without RTP while not on hold, ms (default 30 000); also from the answer when no RTP ever comes. */
  readonly rtpTimeoutMs?: number | undefined;
  /** Ring (180) this long before answering, ms (default 0: answer at once). */
  readonly ringMs?: number | undefined;
  /** Take SIP and RTP only from these senders (addresses, or a predicate); others are dropped unanswered and counted. */
  readonly allowedSources?: readonly string[] | ((remote: { readonly address: string; readonly port: number }) => boolean) | undefined;
  /** Digest authentication of INVITEs (and in-dialog requests are tied to their dialog). */
  readonly auth?: SipDigestAuth | undefined;
  /** SIPREC recording sessions (INVITEs with `multipart/mixed` SDP and rs-metadata). */
  readonly siprec?: SipRecOptions | undefined;
  /** Largest message, bytes (default 65 535). */
  readonly maxMessageBytes?: number | undefined;
  /** Longest line of a message's head, bytes (default 8 192). */
  readonly maxLineLength?: number | undefined;
  /** Most header fields of a message (default 100). */
  readonly maxHeaders?: number | undefined;
  /** TCP connections at once (default 1 000). */
  readonly maxConnections?: number | undefined;
  /** RFC 3261 timers (default T1 500, T2 4000, T4 5000 ms). */
  readonly timers?: Partial<SipTimers> | undefined;
  /** Longest wait for a missing RTP packet, ms (default 60). */
  readonly playoutDelayMs?: number | undefined;
  /** Most RTP packets held behind a gap (default 64). */
  readonly maxHeldPackets?: number | undefined;
  /** Frames of audio, ms (default 100; 0: each packet as it is released), as `rtpSource`'s. */
  readonly frameMs?: number | undefined;
  /** ffmpeg for G.722. */
  readonly ffmpegPath?: string | undefined;
  /** Receive buffer of the SIP and RTP sockets, bytes. */
  readonly recvBufferSize?: number | undefined;
  /** Called once listening: the address and the one port UDP and TCP share. */
  readonly onListening?: ((address: { readonly address: string; readonly port: number }) => void) | undefined;
  /** Told about every refused message or request (each also counted). */
  readonly onRefused?: ((refusal: SipRefusal) => void) | undefined;
  /** Told once, the first time `maxCalls` refuses a call (code `max_calls`). Default: `process.emitWarning`. */
  readonly onWarning?: WarningHandler<LimitWarning> | undefined;
  readonly stats?: SipServerStats | undefined;
  /** Every timer (RFC 3261's, RTP timeout, ringing) goes through it (default `asyncScheduler`). */
  readonly scheduler?: SchedulerLike | undefined;
  /**
   * The service's life cycle (`ServiceLifecycle`): the server attaches to it as a `CallServer`
   * and makes it `ready` once it listens. Draining, new INVITEs (and OPTIONS) are answered 503
   * with `Retry-After: retryAfterS` (counted in `stats.drainRefused`) while the calls in flight
   * go on; forced (the drain deadline, a second signal), each call is sent BYE and its audio
   * fails with the `shutdown` error. Its metrics: `sipMetrics`. Under `callWorkers`, the
   * worker's own life cycle is used by default.
   */
  readonly lifecycle?: ServiceLifecycle | undefined;
  /**
   * The worker handle `callWorkers` gives each worker: worker i listens on `port + i` (port 0:
   * a free one each), takes its slice of `rtpPorts`, `maxCalls` holds across them, and `stats`
   * add up in the primary.
   */
  readonly worker?: CallWorker | undefined;
  /** Server and User-Agent header value (default `svc-stream`). */
  readonly userAgent?: string | undefined;
}

/**
 * A SIP user agent server on UDP and TCP that answers calls and emits each as a {@link SipCall}
 * (audio, parties, metadata), ready for `analyzeCalls`.
 *
 * - Cold: each subscription binds its own UDP socket and TCP listener on one port; unsubscribing
 *   sends BYE to every call, completes their audio and closes the sockets.
 * - RFC 3261 transactions: 100 Trying at once, retransmissions absorbed, our 200 retransmitted
 *   (T1 doubling to T2) until the ACK, a non-2xx final until its ACK (Timer G, H), BYE retried
 *   (Timer E, F). INVITE, ACK, BYE, CANCEL, OPTIONS, UPDATE; a re-INVITE holds or unholds.
 * - SDP offer and answer (RFC 3264, sdp-transform): each audio stream gets the first of `codecs`
 *   it offers (PCMU, PCMA, L16, G.722), telephone-event is answered and its packets dropped, the
 *   rest refused; answered recvonly, its RTP on an even port of `rtpPorts`. No codec we take: 488.
 * - Each call's RTP goes through the jitter buffer and live audio of `rtpSource`'s legs (100 ms
 *   frames, the session's replay log). A BYE ends the call, and so does `rtpTimeoutMs` without RTP
 *   (BYE sent); a hold pauses the timeout and its time is left out of the audio.
 * - SIPREC (RFC 7866): an INVITE with `multipart/mixed` SDP and `application/rs-metadata+xml`
 *   becomes one two-channel call (a channel per participant, by `a=label` and the metadata's
 *   stream associations) or a call per stream (`siprec.mode: 'separate'`); participants and the
 *   recorded session's ids are the call's `metadata`, kept current through re-INVITE or UPDATE.
 *   Answered recvonly with plain `application/sdp`.
 * - Bounded and typed: a message over `maxMessageBytes`, `maxLineLength` or `maxHeaders`, or not
 *   SIP, is dropped and counted by reason (`stats`, `onRefused`), never answered (an answer to a
 *   forged source would be a reflection); past `maxCalls` an INVITE gets 503 with Retry-After (or
 *   486); a source outside `allowedSources` is dropped unanswered; with `auth`, an INVITE without
 *   good digest credentials (SHA-256 or MD5) gets 401.
 * - Errors only when it cannot listen (`AudioSourceError('source_error')`).
 *
 * ## Example
 * ```ts
 * import { analyzeCalls, sipServer } from 'svc-stream/telephony';
 *
 * analyzeCalls(sipServer({ port: 5060 }), { maxConcurrent: 10 }).subscribe((call) => {
 *   console.log(call.id, call.call.title);
 *   call.outcome$.subscribe((o) => console.log(call.id, o.status));
 * });
 * ```
 */
export function sipServer(options: SipServerOptions = {}): Observable<SipCall> {
  const host = options.host ?? '127.0.0.1';
  const publicAddress = options.publicAddress ?? host;
  if (publicAddress === '0.0.0.0' || publicAddress === '::') throw new InputError('invalid_argument', `sipServer: listening on ${host} needs publicAddress (the address peers reach, for Contact and SDP)`, { path: 'publicAddress' });
  const maxCalls = positiveInteger('sipServer', 'maxCalls', options.maxCalls, 100);
  const frameMs = options.frameMs ?? DEFAULT_LIVE_FRAME_MS;
  if (!Number.isFinite(frameMs) || !(frameMs === 0 || frameMs >= 1)) throw new InputError('invalid_argument', `sipServer: frameMs must be 0 (no grouping) or at least 1, got ${frameMs}`, { path: 'frameMs' });
  const codecs = options.codecs ?? DEFAULT_SIP_CODECS;
  for (const c of codecs) if (!DEFAULT_SIP_CODECS.includes(c)) throw new InputError('invalid_argument', `sipServer: codec ${String(c)} is not one of ${DEFAULT_SIP_CODECS.join(', ')}`, { path: 'codecs' });
  if (codecs.length === 0) throw new InputError('invalid_argument', 'sipServer: codecs is empty', { path: 'codecs' });
  const range = options.rtpPorts ?? DEFAULT_RTP_PORTS;
  if (!(Number.isInteger(range.min) && Number.isInteger(range.max) && range.min >= 1024 && range.max <= 65535 && range.max - range.min >= 1)) {
    throw new InputError('invalid_argument', `sipServer: rtpPorts must be integers 1024–65535 with max > min, got ${range.min}–${range.max}`, { path: 'rtpPorts' });
  }
  const rtpTimeoutMs = options.rtpTimeoutMs ?? 30_000;
  if (!(rtpTimeoutMs > 0)) throw new InputError('invalid_argument', `sipServer: rtpTimeoutMs must be over 0, got ${rtpTimeoutMs}`, { path: 'rtpTimeoutMs' });
  const transports = options.transports ?? ['udp', 'tcp'];
  if (transports.length === 0 || transports.some((t) => t !== 'udp' && t !== 'tcp')) throw new InputError('invalid_argument', `sipServer: transports are 'udp' and 'tcp'`, { path: 'transports' });
  const handle = workerHandle(options.worker);
  const basePort = options.port ?? 5060;
  const port = handle !== undefined && basePort > 0 ? basePort + handle.index : basePort;
  // Under workers each takes its slice of the RTP range.
  const slice = handle !== undefined ? sliceOf(range, handle.index, handle.workers) : range;
  const timers: SipTimers = { ...DEFAULT_SIP_TIMERS, ...options.timers };
  return new Observable<SipCall>((subscriber) => {
    const stats = options.stats ?? createSipServerStats();
    handle?.reportStats('sipServer', stats);
    const ua = new SipUserAgent({
      host,
      port,
      publicAddress,
      transports,
      rtpPorts: slice,
      codecs,
      maxCalls,
      whenFull: options.whenFull ?? '503',
      retryAfterS: options.retryAfterS ?? 5,
      rtpTimeoutMs,
      ringMs: options.ringMs ?? 0,
      allowedSources: options.allowedSources,
      auth: options.auth,
      siprecMode: options.siprec?.mode ?? 'stereo',
      limits: {
        maxMessageBytes: options.maxMessageBytes ?? DEFAULT_SIP_LIMITS.maxMessageBytes,
        maxLineLength: options.maxLineLength ?? DEFAULT_SIP_LIMITS.maxLineLength,
        maxHeaders: options.maxHeaders ?? DEFAULT_SIP_LIMITS.maxHeaders,
      },
      maxConnections: options.maxConnections ?? 1000,
      timers,
      media: { playoutDelayMs: options.playoutDelayMs, maxHeldPackets: options.maxHeldPackets, frameMs, ffmpegPath: options.ffmpegPath },
      recvBufferSize: options.recvBufferSize,
      userAgent: options.userAgent ?? 'svc-stream',
      stats,
      scheduler: options.scheduler ?? asyncScheduler,
      onRefused: options.onRefused,
      onWarning: options.onWarning,
      handle,
      emit: (call) => subscriber.next(call),
    });
    const lifecycle = options.lifecycle ?? handle?.lifecycle;
    const attached = lifecycle?.attach(ua.control);
    ua.onInFlightChanged = () => attached?.changed();
    ua.listen().then(
      (address) => {
        handle?.listening(address.port);
        lifecycle?.ready();
        options.onListening?.(address);
      },
      (err: Error) => subscriber.error(new AudioSourceError('source_error', `SIP server cannot listen on ${host}:${port}: ${err.message}`, { cause: err })),
    );
    return () => {
      ua.close();
      attached?.detach();
    };
  });
}

function sliceOf(range: PortRange, index: number, workers: number): PortRange {
  const size = Math.floor((range.max - range.min + 1) / workers);
  if (size < 4) throw new InputError('invalid_argument', `sipServer: rtpPorts ${range.min}–${range.max} is too small for ${workers} workers`, { path: 'rtpPorts' });
  return { min: range.min + index * size, max: range.min + (index + 1) * size - 1 };
}
