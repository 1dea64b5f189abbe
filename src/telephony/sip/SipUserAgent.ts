// The SIP user agent server behind `sipServer`: each message to its transaction or dialog, the
// RFC 3261 timers on the scheduler, INVITE to an answered call (offer, ports, 200, ACK), a call's
// end (BYE either way, RTP timeout, no ACK), and the refusals, each counted.
import { randomBytes, createHash } from 'node:crypto';
import { BehaviorSubject, ReplaySubject, type SchedulerLike, type Subscription } from 'rxjs';
import type { LimitWarning, WarningHandler } from '../../warnings.js';
import { sourceFilter, type AllowedSources } from '../allowedSources.js';
import type { WorkerHandle } from '../callWorker.js';
import { warnOnce } from '../limitWarning.js';
import { DigestVerifier, type DigestRefusal, type SipDigestAuth } from './digestAuth.js';
import type { SipCall, SipCallEnd, SipCallMetadata, SipCallParticipant, SipParty } from './sipCall.js';
import { monoAudio, stereoAudio, SipRtpStream, type CallAudio, type SipMediaSettings } from './sipMedia.js';
import { parseNameAddr, parseSipMessage, SipParseError, uriHostPort, writeRequest, writeResponse, type HeaderList, type SipLimits, type SipRefusalReason, type SipRequest, type SipResponse } from './sipMessage.js';
import { readOffer, SdpError, writeAnswer, type AnsweredStream, type ReadOffer } from './sdpNegotiation.js';
import type { SipCodecName } from './sipCodecs.js';
import { readSiprecMetadata, senderOf, SiprecError, splitMultipart, type SiprecMetadata } from './siprecMetadata.js';
import { RtpPorts, type PortRange } from './rtpPorts.js';
import { SipTransport, type SipPeer } from './sipTransport.js';
import { sipMetrics, type SipServerControl, type SipServerStats, type SipTimers } from './sipServer.js';

/** A message or request the server refused, and why (each also counted in `stats`). */
export interface SipRefusal {
  /** A message that could not be read (its {@link SipRefusalReason}), or a request refused: `disallowed_source`, a digest refusal, `busy`, `draining`, `not_acceptable`, `no_ports`, `unknown_dialog`, `method_not_allowed`, `bad_extension`, `tcp_over_capacity`. */
  readonly reason: SipRefusalReason | DigestRefusal | 'disallowed_source' | 'busy' | 'draining' | 'not_acceptable' | 'no_ports' | 'unknown_dialog' | 'method_not_allowed' | 'bad_extension' | 'tcp_over_capacity';
  /** One line for a log. */
  readonly message: string;
  readonly remote: { readonly address: string; readonly port: number; readonly transport: 'udp' | 'tcp' };
  /** The status answered, when one was. */
  readonly status: number | undefined;
}

const STAT_OF: Record<SipRefusalReason, keyof SipServerStats> = {
  too_large: 'tooLarge',
  line_too_long: 'lineTooLong',
  too_many_headers: 'tooManyHeaders',
  bad_start_line: 'badStartLine',
  unsupported_version: 'unsupportedVersion',
  bad_header: 'badHeader',
  missing_header: 'missingHeader',
  bad_cseq: 'badCseq',
  bad_max_forwards: 'badMaxForwards',
  bad_content_length: 'badContentLength',
  bad_via: 'badVia',
  bad_address: 'badAddress',
};

const ALLOW = 'INVITE, ACK, BYE, CANCEL, OPTIONS, UPDATE';
const SUPPORTED_TAGS = new Set(['siprec']);

export interface SipUserAgentSettings {
  readonly host: string;
  readonly port: number;
  readonly publicAddress: string;
  readonly transports: readonly ('udp' | 'tcp')[];
  readonly rtpPorts: PortRange;
  readonly codecs: readonly SipCodecName[];
  readonly maxCalls: number;
  readonly whenFull: '503' | '486';
  readonly retryAfterS: number;
  readonly rtpTimeoutMs: number;
  readonly ringMs: number;
  readonly allowedSources: AllowedSources | undefined;
  readonly auth: SipDigestAuth | undefined;
  readonly siprecMode: 'stereo' | 'separate';
  readonly limits: SipLimits;
  readonly maxConnections: number;
  readonly timers: SipTimers;
  readonly media: Pick<SipMediaSettings, 'playoutDelayMs' | 'maxHeldPackets' | 'frameMs' | 'ffmpegPath'>;
  readonly recvBufferSize: number | undefined;
  readonly userAgent: string;
  readonly stats: SipServerStats;
  readonly scheduler: SchedulerLike;
  readonly onRefused: ((refusal: SipRefusal) => void) | undefined;
  readonly onWarning: WarningHandler<LimitWarning> | undefined;
  readonly handle: WorkerHandle | undefined;
  readonly emit: (call: SipCall) => void;
}

/** A server transaction (RFC 3261 §17.2): the request, its last response, its timers. */
interface ServerTransaction {
  readonly key: string;
  readonly request: SipRequest;
  readonly peer: SipPeer;
  /** `proceeding` (no final yet), `completed` (a final sent: non-2xx INVITE waits for ACK), `accepted` (2xx to INVITE, RFC 6026), `confirmed`. */
  state: 'proceeding' | 'completed' | 'accepted' | 'confirmed';
  last: Buffer | undefined;
  timer: Subscription | undefined;
  /** An INVITE being answered: the call it makes. */
  call: Dialog | undefined;
}

/** A client transaction of ours (a BYE). */
interface ClientTransaction {
  readonly bytes: Buffer;
  readonly peer: SipPeer;
  timer: Subscription | undefined;
}

type CallState = 'answering' | 'answered' | 'confirmed' | 'ended';

/** One call's dialog, media and what was emitted for it. */
interface Dialog {
  readonly id: string;
  readonly invite: SipRequest;
  readonly peer: SipPeer;
  readonly localTag: string;
  readonly remoteTag: string | undefined;
  readonly key: string;
  state: CallState;
  remoteTarget: string;
  readonly routeSet: readonly string[];
  localCseq: number;
  remoteCseq: number;
  offer: ReadOffer;
  answer: string;
  answerVersion: number;
  streams: SipRtpStream[];
  /** Each stream's offer index, in `streams` order. */
  streamIndex: number[];
  /** Each stream's direction in the first offer (a hold is measured against it). */
  readonly initialDirections: readonly string[];
  audios: CallAudio[];
  metadata: BehaviorSubject<SipCallMetadata>;
  siprec: SiprecMetadata | undefined;
  ended: ReplaySubject<SipCallEnd>;
  okTimer: Subscription | undefined;
  rtpTimer: Subscription | undefined;
  /** The worker slot taken under `maxCalls` across workers. */
  sharedSlot: boolean;
}

const tag = (): string => randomBytes(6).toString('hex');

/** The user agent server: one per subscription of `sipServer`. */
export class SipUserAgent {
  private readonly transport: SipTransport;
  private readonly serverTx = new Map<string, ServerTransaction>();
  private readonly clientTx = new Map<string, ClientTransaction>();
  private readonly dialogs = new Map<string, Dialog>();
  private readonly ports: RtpPorts;
  private readonly allowed: ((r: { address: string; port: number }) => boolean) | undefined;
  private readonly digest: DigestVerifier | undefined;
  private readonly warnFull: () => void;
  private readonly media: SipMediaSettings;
  private inFlight = 0;
  private accepting = true;
  private closed = false;
  private listeningPort = 0;
  /** Told when `inFlight` dropped (the life cycle's `changed`). */
  onInFlightChanged: (() => void) | undefined;

  /** What a service life cycle drives. */
  readonly control: SipServerControl;

  constructor(private readonly s: SipUserAgentSettings) {
    this.allowed = sourceFilter(s.allowedSources) as typeof this.allowed;
    this.digest = s.auth ? new DigestVerifier(s.auth, () => Date.now()) : undefined;
    this.ports = new RtpPorts(s.rtpPorts, s.host, s.recvBufferSize);
    this.media = { scheduler: s.scheduler, ...s.media, allowed: this.allowed };
    this.warnFull = warnOnce(
      {
        code: 'max_calls',
        option: 'maxCalls',
        limit: s.maxCalls,
        message: `sipServer: an INVITE was refused (${s.whenFull === '486' ? '486 Busy Here' : '503 with Retry-After'}) because ${s.maxCalls} calls are running (maxCalls); further refusals are counted in stats.busy. Raise maxCalls to take more calls at once.`,
      },
      s.onWarning,
    );
    this.transport = new SipTransport(
      { host: s.host, port: s.port, transports: s.transports, limits: s.limits, maxConnections: s.maxConnections, idleMs: 600_000, recvBufferSize: s.recvBufferSize },
      {
        message: (bytes, peer) => this.onMessage(bytes, peer),
        refused: (err, peer) => this.refusedUnread(err, peer),
        connected: () => void s.stats.tcpConnections++,
        overCapacity: (peer) => {
          s.stats.tcpRefused++;
          this.refused('tcp_over_capacity', `a TCP connection over maxConnections (${s.maxConnections})`, peer, undefined);
        },
      },
    );
    const ua = this;
    this.control = {
      get inFlight() {
        return ua.inFlight;
      },
      stopAccepting: () => {
        this.accepting = false;
      },
      endCalls: (error) => {
        for (const d of [...this.dialogs.values()]) this.endCall(d, 'shutdown', true, error);
      },
      metrics: () => sipMetrics(s.stats),
    };
  }

  async listen(): Promise<{ address: string; port: number }> {
    const a = await this.transport.listen();
    this.listeningPort = a.port;
    return a;
  }

  close(): void {
    if (this.closed) return;
    for (const d of [...this.dialogs.values()]) this.endCall(d, 'stopped', true);
    this.closed = true;
    for (const t of this.serverTx.values()) t.timer?.unsubscribe();
    for (const t of this.clientTx.values()) t.timer?.unsubscribe();
    this.serverTx.clear();
    this.clientTx.clear();
    this.transport.close();
  }

  // ——— messages in ———

  private onMessage(bytes: Buffer, peer: SipPeer): void {
    const st = this.s.stats;
    st.messages++;
    if (this.allowed && !this.allowed(peer)) {
      st.disallowedSource++;
      this.refused('disallowed_source', `a message from ${peer.address}, not in allowedSources`, peer, undefined, false);
      return;
    }
    let msg;
    try {
      msg = parseSipMessage(bytes, this.s.limits, peer.transport === 'tcp');
    } catch (err) {
      if (err instanceof SipParseError) return this.refusedUnread(err, peer);
      throw err;
    }
    if (msg.kind === 'response') return this.onResponse(msg);
    this.onRequest(msg, peer);
  }

  private refusedUnread(err: SipParseError, peer: SipPeer): void {
    const st = this.s.stats;
    st.malformed++;
    st[STAT_OF[err.reason]]++;
    this.refused(err.reason, err.message, peer, undefined, false);
  }

  private refused(reason: SipRefusal['reason'], message: string, peer: SipPeer, status: number | undefined, _answered = true): void {
    const cb = this.s.onRefused;
    if (!cb) return;
    try {
      cb({ reason, message, remote: { address: peer.address, port: peer.port, transport: peer.transport }, status });
    } catch {
      /* a failing reporter must not take the server down */
    }
  }

  private txKey(req: SipRequest): string {
    const method = req.method === 'ACK' ? 'INVITE' : req.method;
    const branch = req.via.params['branch'];
    if (branch?.startsWith('z9hG4bK')) return `${branch}|${req.via.host}:${req.via.port ?? ''}|${method}`;
    // RFC 2543 peers: the request's own identity (§17.2.3).
    return `${req.callId}|${req.cseq.seq}|${req.from.params['tag'] ?? ''}|${req.via.raw}|${method}`;
  }

  private onRequest(req: SipRequest, peer: SipPeer): void {
    const st = this.s.stats;
    const key = this.txKey(req);
    const tx = this.serverTx.get(key);
    if (req.method === 'ACK') return this.onAck(req, tx);
    if (tx) {
      // A retransmission: the last response again (RFC 3261 §17.2.1, §17.2.2).
      st.retransmissions++;
      if (tx.last) this.transport.send(peer, tx.last);
      return;
    }
    const unsupported = req.headers
      .list('require')
      .map((t) => t.toLowerCase())
      .filter((t) => !SUPPORTED_TAGS.has(t));
    if (unsupported.length > 0 && req.method !== 'CANCEL') {
      st.otherRefused++;
      this.refused('bad_extension', `Require: ${unsupported.join(', ')}`, peer, 420);
      return this.answerOnce(req, peer, 420, [['Unsupported', unsupported.join(', ')]]);
    }
    switch (req.method) {
      case 'INVITE':
        return req.to.params['tag'] === undefined ? this.onInvite(req, peer) : this.onReinvite(req, peer);
      case 'CANCEL':
        return this.onCancel(req, peer);
      case 'BYE':
        return this.onBye(req, peer);
      case 'OPTIONS':
        st.options++;
        if (!this.accepting) {
          st.drainRefused++;
          return this.answerOnce(req, peer, 503, [['Retry-After', String(this.s.retryAfterS)]]);
        }
        return this.answerOnce(req, peer, 200, [['Allow', ALLOW], ['Accept', 'application/sdp, multipart/mixed'], ['Supported', 'siprec']]);
      case 'UPDATE':
        return this.onUpdate(req, peer);
      default:
        st.otherRefused++;
        this.refused('method_not_allowed', `${req.method} is not taken here`, peer, 405);
        return this.answerOnce(req, peer, 405, [['Allow', ALLOW]]);
    }
  }

  // ——— transactions ———

  private newTx(req: SipRequest, peer: SipPeer): ServerTransaction {
    const tx: ServerTransaction = { key: this.txKey(req), request: req, peer, state: 'proceeding', last: undefined, timer: undefined, call: undefined };
    this.serverTx.set(tx.key, tx);
    this.s.stats.transactions = this.serverTx.size;
    return tx;
  }

  private headers(extra: HeaderList): HeaderList {
    return [['Server', this.s.userAgent], ...extra];
  }

  /** Send a response in `tx`, moving it on (RFC 3261 §17.2.1 for INVITE, §17.2.2 otherwise). */
  private respond(tx: ServerTransaction, status: number, extra: HeaderList = [], body?: { type: string; bytes: Buffer }, toTag?: string): void {
    const bytes = writeResponse(tx.request, status, this.headers(extra), body, toTag);
    tx.last = bytes;
    this.transport.send(tx.peer, bytes);
    if (status < 200) return;
    const { t1, t2 } = this.s.timers;
    const sched = this.s.scheduler;
    const reliable = tx.peer.transport === 'tcp';
    tx.timer?.unsubscribe();
    if (tx.request.method !== 'INVITE') {
      // Timer J: absorb retransmissions for 64·T1 over UDP.
      tx.state = 'completed';
      tx.timer = sched.schedule(() => this.forget(tx), reliable ? 0 : 64 * t1);
      return;
    }
    if (status < 300) {
      // RFC 6026's Accepted: the 2xx is the dialog's to retransmit; INVITE retransmissions get it again.
      tx.state = 'accepted';
      tx.timer = sched.schedule(() => this.forget(tx), 64 * t1);
      return;
    }
    tx.state = 'completed';
    const deadline = sched.now() + 64 * t1;
    // Timer G (UDP): the final again, T1 doubling to T2; Timer H: give up at 64·T1.
    const resend = (interval: number) =>
      sched.schedule(() => {
        if (tx.state !== 'completed') return;
        if (sched.now() >= deadline) {
          this.s.stats.ackTimeouts++;
          this.forget(tx);
          return;
        }
        if (!reliable) this.transport.send(tx.peer, bytes);
        tx.timer = resend(Math.min(interval * 2, t2));
      }, Math.min(interval, Math.max(0, deadline - sched.now())));
    tx.timer = resend(reliable ? 64 * t1 : t1);
  }

  private forget(tx: ServerTransaction): void {
    this.serverTx.delete(tx.key);
    this.s.stats.transactions = this.serverTx.size;
  }

  /** A response in a transaction of its own that nothing else follows. */
  private answerOnce(req: SipRequest, peer: SipPeer, status: number, extra: HeaderList = [], body?: { type: string; bytes: Buffer }): void {
    this.respond(this.newTx(req, peer), status, extra, body, status >= 200 && req.to.params['tag'] === undefined ? tag() : undefined);
  }

  private onAck(ack: SipRequest, tx: ServerTransaction | undefined): void {
    if (tx && tx.state === 'completed') {
      // The ACK of a non-2xx final: Timer I, then gone.
      tx.state = 'confirmed';
      tx.timer?.unsubscribe();
      tx.timer = this.s.scheduler.schedule(() => this.forget(tx), tx.peer.transport === 'tcp' ? 0 : this.s.timers.t4);
      return;
    }
    const d = this.dialogs.get(this.dialogKey(ack.callId, ack.to.params['tag']));
    if (!d) return; // An ACK for nothing we know: RFC 3261 §17.2.3 says drop it.
    if (d.state === 'answered') {
      d.state = 'confirmed';
      d.okTimer?.unsubscribe();
      d.okTimer = undefined;
    }
  }

  private onResponse(res: SipResponse): void {
    const key = res.via.params['branch'] ?? '';
    const tx = this.clientTx.get(key);
    if (!tx) {
      this.s.stats.strayResponses++;
      return;
    }
    if (res.status < 200) return;
    tx.timer?.unsubscribe();
    this.clientTx.delete(key);
  }

  // ——— INVITE ———

  private dialogKey(callId: string, localTag: string | undefined): string {
    return `${callId}|${localTag ?? ''}`;
  }

  private onInvite(req: SipRequest, peer: SipPeer): void {
    const st = this.s.stats;
    st.invites++;
    const tx = this.newTx(req, peer);
    const localTag = tag();
    if (!this.accepting) {
      st.drainRefused++;
      this.refused('draining', 'an INVITE while draining', peer, 503);
      return this.respond(tx, 503, [['Retry-After', String(this.s.retryAfterS)]], undefined, localTag);
    }
    if (this.digest) {
      const refusal = this.digest.verify('INVITE', req.headers.get('authorization'));
      if (refusal !== undefined) {
        st.unauthorized++;
        this.refused(refusal, `INVITE from ${req.from.uri}: ${refusal}`, peer, 401);
        return this.respond(
          tx,
          401,
          this.digest.challenges(refusal === 'stale_nonce').map((c) => ['WWW-Authenticate', c] as const),
          undefined,
          localTag,
        );
      }
    }
    if (this.inFlight >= this.s.maxCalls || this.s.handle?.isFull('connections')) return this.refuseBusy(tx, localTag);
    // What the INVITE offers, read before anything is held.
    let offer: ReadOffer;
    let siprec: SiprecMetadata | undefined;
    try {
      ({ offer, siprec } = this.readBody(req));
    } catch (err) {
      return this.refuseOffer(tx, err, localTag);
    }
    // SIPREC streams come sendonly; a phone's sendrecv; an inactive one may start on hold.
    const wanted = offer.audio.filter((a) => a.codec !== undefined && a.direction !== 'recvonly');
    if (wanted.length === 0) {
      st.notAcceptable++;
      this.refused('not_acceptable', `no audio stream we can receive in a codec we take (${this.s.codecs.join(', ')})`, peer, 488);
      return this.respond(tx, 488, [['Warning', `305 ${this.s.publicAddress} "Incompatible media format"`]], undefined, localTag);
    }
    this.inFlight++;
    this.s.stats.running++;
    this.transport.send(peer, writeResponse(req, 100, this.headers([])));
    tx.last = writeResponse(req, 100, this.headers([]));
    void this.answer(tx, req, peer, offer, siprec, wanted.map((w) => w.index), localTag);
  }

  private refuseBusy(tx: ServerTransaction, localTag: string): void {
    this.s.stats.busy++;
    this.warnFull();
    this.refused('busy', `an INVITE over maxCalls (${this.s.maxCalls})`, tx.peer, this.s.whenFull === '486' ? 486 : 503);
    if (this.s.whenFull === '486') return this.respond(tx, 486, [], undefined, localTag);
    return this.respond(tx, 503, [['Retry-After', String(this.s.retryAfterS)]], undefined, localTag);
  }

  private refuseOffer(tx: ServerTransaction, err: unknown, localTag: string): void {
    this.s.stats.notAcceptable++;
    const status = err instanceof SdpError ? err.status : err instanceof UnsupportedBody ? 415 : 400;
    this.refused('not_acceptable', (err as Error).message, tx.peer, status);
    const extra: HeaderList = status === 415 ? [['Accept', 'application/sdp, multipart/mixed']] : status === 488 ? [['Warning', `305 ${this.s.publicAddress} "Incompatible media format"`]] : [];
    this.respond(tx, status, extra, undefined, localTag);
  }

  /** The SDP offer and, for SIPREC, the metadata of a request's body. Throws SdpError, SiprecError or UnsupportedBody. */
  private readBody(req: SipRequest): { offer: ReadOffer; siprec: SiprecMetadata | undefined } {
    const type = req.headers.get('content-type') ?? '';
    const base = type.split(';')[0]!.trim().toLowerCase();
    if (req.body.length === 0) throw new SdpError(488, 'an INVITE without an offer (the server answers offers; it makes none)');
    if (base === 'application/sdp') return { offer: readOffer(req.body.toString('utf8'), this.s.codecs), siprec: undefined };
    if (base === 'multipart/mixed') {
      const parts = splitMultipart(type, req.body);
      const sdp = parts.find((p) => p.type === 'application/sdp');
      const meta = parts.find((p) => p.type === 'application/rs-metadata+xml' || p.type === 'application/rs-metadata');
      if (!sdp) throw new SdpError(488, 'a multipart body without application/sdp');
      return { offer: readOffer(sdp.body.toString('utf8'), this.s.codecs), siprec: meta ? readSiprecMetadata(meta.body.toString('utf8')) : undefined };
    }
    throw new UnsupportedBody(`a body of type ${base || '(none)'} (application/sdp or multipart/mixed taken)`);
  }

  private async answer(tx: ServerTransaction, req: SipRequest, peer: SipPeer, offer: ReadOffer, siprec: SiprecMetadata | undefined, indexes: number[], localTag: string): Promise<void> {
    const st = this.s.stats;
    const handle = this.s.handle;
    let sharedSlot = false;
    const release = (): void => {
      this.inFlight--;
      st.running--;
      if (sharedSlot) handle!.give('connections');
      this.onInFlightChanged?.();
    };
    if (handle) {
      sharedSlot = await handle.take('connections', this.s.maxCalls);
      if (!sharedSlot) {
        release();
        return this.refuseBusy(tx, localTag);
      }
    }
    // One port per stream; a CANCEL may come meanwhile.
    const opened: { socket: import('node:dgram').Socket; port: number }[] = [];
    for (let i = 0; i < indexes.length; i++) {
      const p = this.closed ? undefined : await this.ports.open();
      if (!p) break;
      opened.push(p);
    }
    const gone = this.closed || tx.state !== 'proceeding' || !this.serverTx.has(tx.key);
    if (gone || opened.length < indexes.length) {
      for (const p of opened) p.socket.close();
      release();
      if (gone) return;
      st.noPorts++;
      this.refused('no_ports', `no free RTP port in ${this.s.rtpPorts.min}–${this.s.rtpPorts.max}`, peer, 503);
      return this.respond(tx, 503, [['Retry-After', String(this.s.retryAfterS)]], undefined, localTag);
    }
    const streams = indexes.map((index, i) => {
      const o = offer.audio.find((a) => a.index === index)!;
      const s = new SipRtpStream(opened[i]!.socket, opened[i]!.port, o.codec!, o.payloadTypes, this.media, siprec === undefined || this.s.siprecMode === 'separate' || indexes.length !== 2);
      s.setHeld(o.direction === 'inactive');
      return s;
    });
    const answered: AnsweredStream[] = indexes.map((index, i) => ({ stream: offer.audio.find((a) => a.index === index)!, port: streams[i]!.port }));
    const sessionId = String(Math.floor(Math.random() * 2 ** 31));
    const answer = writeAnswer(offer, answered, { address: this.s.publicAddress, sessionId, version: 1 });
    const contact = req.headers.list('contact')[0];
    let remoteTarget = req.from.uri;
    try {
      if (contact) remoteTarget = parseNameAddr(contact).uri;
    } catch {
      /* keep From's URI */
    }
    const d: Dialog = {
      id: `sip-${createHash('sha1').update(`${req.callId}|${localTag}`).digest('hex').slice(0, 10)}`,
      invite: req,
      peer,
      localTag,
      remoteTag: req.from.params['tag'],
      key: this.dialogKey(req.callId, localTag),
      state: 'answering',
      remoteTarget,
      routeSet: req.headers.list('record-route'),
      localCseq: Math.floor(Math.random() * 10_000) + 1,
      remoteCseq: req.cseq.seq,
      offer,
      answer,
      answerVersion: 1,
      streams,
      streamIndex: indexes,
      initialDirections: indexes.map((index) => offer.audio.find((a) => a.index === index)!.direction),
      audios: [],
      metadata: new BehaviorSubject(this.metadataOf(req, offer, indexes, siprec, false)),
      siprec,
      ended: new ReplaySubject<SipCallEnd>(1),
      okTimer: undefined,
      rtpTimer: undefined,
      sharedSlot,
    };
    tx.call = d;
    this.dialogs.set(d.key, d);
    const ok = (): void => {
      if (d.state !== 'answering') return;
      d.state = 'answered';
      this.respond(tx, 200, this.dialogHeaders(d, req), { type: 'application/sdp', bytes: Buffer.from(answer) }, localTag);
      st.answered++;
      this.retransmitOk(d, tx.last!);
      this.armRtpTimer(d);
      this.emitCalls(d);
    };
    if (this.s.ringMs > 0) {
      this.respond(tx, 180, [['Contact', this.contact(peer)]], undefined, localTag);
      d.okTimer = this.s.scheduler.schedule(ok, this.s.ringMs);
    } else ok();
  }

  private contact(peer: SipPeer): string {
    return `<sip:${this.s.userAgent.replace(/[^A-Za-z0-9._~-]/g, '') || 'svc-stream'}@${hostOf(this.s.publicAddress)}:${this.listeningPort}${peer.transport === 'tcp' ? ';transport=tcp' : ''}>`;
  }

  private dialogHeaders(d: Dialog, req: SipRequest): HeaderList {
    const rr = req.headers.all('record-route').map((v) => ['Record-Route', v] as const);
    return [...rr, ['Contact', this.contact(d.peer)], ['Allow', ALLOW], ['Supported', 'siprec']];
  }

  /** Our 200 again, T1 doubling to T2, until the ACK; at 64·T1 without one, the call ends (RFC 3261 §13.3.1.4). */
  private retransmitOk(d: Dialog, bytes: Buffer): void {
    const { t1, t2 } = this.s.timers;
    const sched = this.s.scheduler;
    const deadline = sched.now() + 64 * t1;
    const reliable = d.peer.transport === 'tcp';
    const step = (interval: number): Subscription =>
      sched.schedule(
        () => {
          if (d.state !== 'answered') return;
          if (sched.now() >= deadline) {
            this.s.stats.ackTimeouts++;
            this.endCall(d, 'ack_timeout', true);
            return;
          }
          if (!reliable) this.transport.send(d.peer, bytes);
          d.okTimer = step(Math.min(interval * 2, t2));
        },
        Math.min(interval, Math.max(0, deadline - sched.now())),
      );
    d.okTimer = step(reliable ? 64 * t1 : t1);
  }

  /** No RTP for `rtpTimeoutMs` on any stream while not held: the call ends. */
  private armRtpTimer(d: Dialog): void {
    const sched = this.s.scheduler;
    const timeout = this.s.rtpTimeoutMs;
    const check = (): void => {
      if (d.state === 'ended') return;
      const now = sched.now();
      if (d.streams.every((s) => s.held)) {
        d.rtpTimer = sched.schedule(check, timeout);
        return;
      }
      const last = Math.max(...d.streams.filter((s) => !s.held).map((s) => s.lastArrival));
      if (now - last >= timeout) {
        this.s.stats.rtpTimeouts++;
        this.endCall(d, 'rtp_timeout', true);
        return;
      }
      d.rtpTimer = sched.schedule(check, last + timeout - now);
    };
    d.rtpTimer = sched.schedule(check, timeout);
  }

  private metadataOf(req: SipRequest, offer: ReadOffer, indexes: readonly number[], siprec: SiprecMetadata | undefined, held: boolean): SipCallMetadata {
    const from: SipParty = { uri: req.from.uri, displayName: req.from.displayName };
    const to: SipParty = { uri: req.to.uri, displayName: req.to.displayName };
    const stereo = siprec !== undefined && this.s.siprecMode === 'stereo' && indexes.length === 2;
    let participants: SipCallParticipant[];
    if (siprec) {
      const labelled = indexes.map((index, i) => {
        const label = offer.audio.find((a) => a.index === index)?.label;
        const p = label !== undefined ? senderOf(siprec, label) : undefined;
        return { id: p?.id ?? `stream-${label ?? index}`, name: p?.name, aor: p?.aor, channel: stereo ? i + 1 : 1, label };
      });
      const others = siprec.participants.filter((p) => !labelled.some((l) => l.id === p.id)).map((p) => ({ id: p.id, name: p.name, aor: p.aor, channel: undefined, label: undefined }));
      participants = [...labelled, ...others];
    } else participants = [{ id: 'caller', name: from.displayName, aor: from.uri, channel: 1, label: undefined }];
    return {
      kind: siprec ? 'siprec' : 'sip',
      callId: req.callId,
      from,
      to,
      participants,
      ...(siprec ? { recording: { sessionId: siprec.sessionId, groupId: siprec.groupId, sipSessionIds: siprec.sipSessionIds } } : {}),
      held,
    };
  }

  private emitCalls(d: Dialog): void {
    const stereo = d.siprec !== undefined && this.s.siprecMode === 'stereo' && d.streams.length === 2;
    const grouping = this.media.frameMs > 0 ? { frameMs: this.media.frameMs, scheduler: this.s.scheduler } : undefined;
    const labelOf = (i: number): string | undefined => d.offer.audio.find((a) => a.index === d.streamIndex[i])?.label;
    const stats = (streams: SipRtpStream[]) => ({
      streams: Object.fromEntries(streams.map((s) => {
        const i = d.streams.indexOf(s);
        return [labelOf(i) ?? (i === 0 ? 'audio' : `audio${i + 1}`), s.stats];
      })),
    });
    const make = (id: string, streams: SipRtpStream[], audio: CallAudio): SipCall => {
      const codec = streams[0]!.codec;
      const metadata$ = d.metadata.asObservable();
      return {
        id,
        get title() {
          return titleOf(d.metadata.value);
        },
        callId: d.invite.callId,
        from: d.metadata.value.from,
        to: d.metadata.value.to,
        remote: { address: d.peer.address, port: d.peer.port, transport: d.peer.transport },
        codec: { name: codec.name, payloadType: codec.payloadType, clockRate: codec.clockRate },
        format: audio.format,
        audio$: audio.audio$,
        get metadata() {
          return d.metadata.value;
        },
        metadata$,
        ended$: d.ended.asObservable(),
        stats: stats(streams),
        hangUp: () => {
          if (d.state !== 'ended') this.endCall(d, 'hangup', true);
        },
      };
    };
    if (stereo) {
      const audio = stereoAudio(d.streams[0]!, d.streams[1]!, grouping);
      d.audios.push(audio);
      this.s.emit(make(d.id, d.streams, audio));
      return;
    }
    d.streams.forEach((s, i) => {
      const audio = monoAudio(s);
      d.audios.push(audio);
      const label = labelOf(i);
      this.s.emit(make(d.streams.length > 1 ? `${d.id}-${label ?? i + 1}` : d.id, [s], audio));
    });
  }

  // ——— in a dialog ———

  private inDialog(req: SipRequest, peer: SipPeer): Dialog | undefined {
    const d = this.dialogs.get(this.dialogKey(req.callId, req.to.params['tag']));
    if (d && d.remoteTag === req.from.params['tag'] && d.state !== 'ended') return d;
    this.s.stats.unknownDialog++;
    this.refused('unknown_dialog', `${req.method} for a dialog we do not know (Call-ID ${req.callId})`, peer, 481);
    this.answerOnce(req, peer, 481);
    return undefined;
  }

  private onBye(req: SipRequest, peer: SipPeer): void {
    const d = this.inDialog(req, peer);
    if (!d) return;
    this.s.stats.byes++;
    this.answerOnce(req, peer, 200);
    this.endCall(d, 'bye', false);
  }

  private onCancel(req: SipRequest, peer: SipPeer): void {
    // The INVITE it cancels: same branch (RFC 3261 §9.2).
    const inviteKey = this.txKey(req).replace(/\|CANCEL$/, '|INVITE');
    const invite = this.serverTx.get(inviteKey);
    if (!invite) {
      this.s.stats.unknownDialog++;
      this.refused('unknown_dialog', `CANCEL for no INVITE we know (Call-ID ${req.callId})`, peer, 481);
      return this.answerOnce(req, peer, 481);
    }
    this.answerOnce(req, peer, 200);
    if (invite.state !== 'proceeding') return; // Answered already: the CANCEL changes nothing.
    this.s.stats.cancelled++;
    const d = invite.call;
    if (d) {
      d.state = 'ended';
      this.release(d);
      d.ended.next('bye');
      d.ended.complete();
    }
    // Whatever was being set up for it sees the transaction leave `proceeding` and lets go.
    this.respond(invite, 487, [], undefined, d?.localTag ?? tag());
  }

  private onReinvite(req: SipRequest, peer: SipPeer): void {
    const d = this.inDialog(req, peer);
    if (!d) return;
    const tx = this.newTx(req, peer);
    if (req.cseq.seq <= d.remoteCseq) return this.respond(tx, 500, [['Retry-After', '1']]);
    d.remoteCseq = req.cseq.seq;
    this.s.stats.updates++;
    if (req.body.length === 0) {
      // An offerless re-INVITE (a refresh): the answer we gave is our offer; its ACK would carry the answer.
      this.respond(tx, 200, this.dialogHeaders(d, req), { type: 'application/sdp', bytes: Buffer.from(d.answer) });
      return;
    }
    const updated = this.update(d, req, tx);
    if (!updated) return;
    this.respond(tx, 200, this.dialogHeaders(d, req), { type: 'application/sdp', bytes: Buffer.from(d.answer) });
    // The 2xx to a re-INVITE is retransmitted until its ACK too (the dialog stays confirmed meanwhile).
  }

  private onUpdate(req: SipRequest, peer: SipPeer): void {
    const d = this.inDialog(req, peer);
    if (!d) return;
    const tx = this.newTx(req, peer);
    this.s.stats.updates++;
    if (req.body.length === 0) return this.respond(tx, 200, [['Contact', this.contact(peer)]]);
    if (!this.update(d, req, tx)) return;
    const hasSdp = d.answer !== '' && /application\/sdp|multipart/i.test(req.headers.get('content-type') ?? '');
    this.respond(tx, 200, [['Contact', this.contact(peer)]], hasSdp ? { type: 'application/sdp', bytes: Buffer.from(d.answer) } : undefined);
  }

  /** A new offer or new metadata in the dialog: hold or unhold, the metadata followed. False when refused (answered already). */
  private update(d: Dialog, req: SipRequest, tx: ServerTransaction): boolean {
    const type = (req.headers.get('content-type') ?? '').split(';')[0]!.trim().toLowerCase();
    let offer: ReadOffer | undefined;
    let siprec: SiprecMetadata | undefined;
    try {
      if (type === 'application/rs-metadata+xml') siprec = readSiprecMetadata(req.body.toString('utf8'));
      else ({ offer, siprec } = this.readBody(req));
    } catch (err) {
      this.refuseOffer(tx, err, d.localTag);
      return false;
    }
    if (siprec) d.siprec = siprec;
    let held = d.metadata.value.held;
    if (offer) {
      // The same streams at the same indexes: their codec kept; a hold is a direction.
      const streams = d.streamIndex.map((index) => offer!.audio.find((a) => a.index === index));
      if (streams.some((s) => s === undefined || s.codec === undefined || s.codec.name !== d.streams[d.streamIndex.indexOf(s.index)]!.codec.name)) {
        this.s.stats.notAcceptable++;
        this.respond(tx, 488, [['Warning', `305 ${this.s.publicAddress} "the call's streams and codecs cannot change"`]]);
        return false;
      }
      // Held: nothing comes (inactive, or recvonly from the caller), or a two-way stream turned sendonly (RFC 3264 §8.4).
      streams.forEach((o, i) => {
        const first = d.initialDirections[i];
        d.streams[i]!.setHeld(o!.direction === 'inactive' || o!.direction === 'recvonly' || (o!.direction === 'sendonly' && first === 'sendrecv'), o!.payloadTypes);
      });
      held = d.streams.every((s) => s.held);
      d.offer = offer;
      d.answerVersion++;
      d.answer = writeAnswer(
        offer,
        d.streamIndex.map((index, i) => ({ stream: offer!.audio.find((a) => a.index === index)!, port: d.streams[i]!.port })),
        { address: this.s.publicAddress, sessionId: /o=\S+ (\d+)/.exec(d.answer)?.[1] ?? '1', version: d.answerVersion },
      );
    }
    d.metadata.next(this.metadataOf(d.invite, d.offer, d.streamIndex, d.siprec, held));
    return true;
  }

  // ——— the end ———

  private endCall(d: Dialog, why: SipCallEnd, sendBye: boolean, error?: unknown): void {
    if (d.state === 'ended') return;
    const confirmedOrAnswered = d.state !== 'answering';
    d.state = 'ended';
    if (why === 'hangup' || why === 'shutdown' || why === 'stopped') this.s.stats.localHangups++;
    if (sendBye && confirmedOrAnswered) this.sendBye(d);
    this.release(d, error);
    d.ended.next(why);
    d.ended.complete();
    d.metadata.complete();
  }

  /** Ports, timers, the call's place. */
  private release(d: Dialog, error?: unknown): void {
    d.okTimer?.unsubscribe();
    d.rtpTimer?.unsubscribe();
    for (const s of d.streams) s.close(error);
    this.dialogs.delete(d.key);
    this.inFlight--;
    this.s.stats.running--;
    if (d.sharedSlot) this.s.handle!.give('connections');
    this.onInFlightChanged?.();
  }

  private sendBye(d: Dialog): void {
    if (this.closed) return;
    const branch = `z9hG4bK${randomBytes(8).toString('hex')}`;
    const route = d.routeSet[0] ? parseNameAddr(d.routeSet[0]).uri : undefined;
    const next = uriHostPort(route ?? d.remoteTarget);
    let peer: SipPeer = d.peer;
    if (d.peer.transport === 'tcp' && d.peer.socket.destroyed) {
      if (!this.transport.hasUdp || !next) return;
      peer = { transport: 'udp', address: next.host, port: next.port ?? 5060 };
    } else if (d.peer.transport === 'udp' && next && next.transport !== 'tcp') {
      peer = { transport: 'udp', address: next.host, port: next.port ?? 5060 };
    }
    const viaTransport = peer.transport === 'tcp' ? 'TCP' : 'UDP';
    const inviteTo = d.invite.headers.get('to')!;
    const bytes = writeRequest('BYE', d.remoteTarget, [
      ['Via', `SIP/2.0/${viaTransport} ${hostOf(this.s.publicAddress)}:${this.listeningPort};branch=${branch};rport`],
      ['Max-Forwards', '70'],
      ['From', d.invite.to.params['tag'] === undefined ? `${inviteTo};tag=${d.localTag}` : inviteTo],
      ['To', d.invite.headers.get('from')!],
      ['Call-ID', d.invite.callId],
      ['CSeq', `${d.localCseq++} BYE`],
      ...d.routeSet.map((r) => ['Route', r] as const),
      ['User-Agent', this.s.userAgent],
    ]);
    this.transport.send(peer, bytes);
    const tx: ClientTransaction = { bytes, peer, timer: undefined };
    this.clientTx.set(branch, tx);
    const { t1, t2 } = this.s.timers;
    const sched = this.s.scheduler;
    const deadline = sched.now() + 64 * t1;
    // Timer E (UDP): again at T1 doubling to T2; Timer F: give up at 64·T1.
    const step = (interval: number): Subscription =>
      sched.schedule(
        () => {
          if (!this.clientTx.has(branch)) return;
          if (sched.now() >= deadline) {
            this.s.stats.byeTimeouts++;
            this.clientTx.delete(branch);
            return;
          }
          if (peer.transport === 'udp') this.transport.send(peer, bytes);
          tx.timer = step(Math.min(interval * 2, t2));
        },
        Math.min(interval, Math.max(0, deadline - sched.now())),
      );
    tx.timer = step(peer.transport === 'tcp' ? 64 * t1 : t1);
  }
}

/** A body type the server does not read (415). */
class UnsupportedBody extends Error {
  override readonly name = 'UnsupportedBody';
}

function hostOf(address: string): string {
  return address.includes(':') ? `[${address}]` : address;
}

function titleOf(m: SipCallMetadata): string {
  const party = (name: string | undefined, uri: string | undefined) => (name && uri ? `${name} <${uri}>` : (name ?? uri ?? '?'));
  if (m.kind === 'siprec') {
    const heard = m.participants.filter((p) => p.channel !== undefined || p.label !== undefined);
    return (heard.length > 0 ? heard : m.participants).map((p) => party(p.name, p.aor)).join(' & ');
  }
  return `${party(m.from.displayName, m.from.uri)} → ${party(m.to.displayName, m.to.uri)}`;
}

export { SiprecError };
