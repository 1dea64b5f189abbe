// A SIP peer for the server's tests: a real UDP socket (or TCP connection) on loopback that
// sends requests as a caller would and reads what comes back, message by message.
import dgram from 'node:dgram';
import net from 'node:net';
import { VirtualAction, VirtualTimeScheduler } from 'rxjs';
import { headEnd, parseSipMessage, type SipMessage, type SipRequest, type SipResponse } from '../../../src/telephony/sip/sipMessage.js';

/** A scheduler whose clock moves only when told (RFC 3261's timers on virtual time, sockets real). */
export class ManualClock extends VirtualTimeScheduler {
  constructor() {
    super(VirtualAction, Infinity);
  }

  /** Run every timer due within `ms` from now, in order; the clock ends `ms` later. */
  advance(ms: number): void {
    const until = this.frame + ms;
    this.maxFrames = until;
    this.flush();
    this.frame = until;
    this.maxFrames = Infinity;
  }
}

export interface Offer {
  readonly port?: number;
  readonly payloads?: string;
  readonly rtpmaps?: readonly string[];
  readonly direction?: string;
  readonly address?: string;
}

export function sdpOffer(o: Offer = {}): string {
  const payloads = o.payloads ?? '0 8 101';
  const maps = o.rtpmaps ?? ['a=rtpmap:0 PCMU/8000', 'a=rtpmap:8 PCMA/8000', 'a=rtpmap:101 telephone-event/8000', 'a=fmtp:101 0-15'];
  return ['v=0', `o=peer 1 1 IN IP4 127.0.0.1`, 's=-', `c=IN IP4 ${o.address ?? '127.0.0.1'}`, 't=0 0', `m=audio ${o.port ?? 40000} RTP/AVP ${payloads}`, ...maps, ...(o.direction ? [`a=${o.direction}`] : []), ''].join('\r\n');
}

let seq = 0;

/** One caller: a socket, its dialogs' identities, what it received. */
export class SipPeer {
  readonly received: SipMessage[] = [];
  private waiters: Array<{ match: (m: SipMessage) => boolean; resolve: (m: SipMessage) => void }> = [];
  private udp: dgram.Socket | undefined;
  private tcp: net.Socket | undefined;
  port = 0;
  readonly tag = `peer${++seq}`;

  private constructor(
    readonly transport: 'udp' | 'tcp',
    private readonly serverPort: number,
  ) {}

  static async open(serverPort: number, transport: 'udp' | 'tcp' = 'udp'): Promise<SipPeer> {
    const p = new SipPeer(transport, serverPort);
    if (transport === 'udp') {
      const s = dgram.createSocket('udp4');
      p.udp = s;
      s.on('message', (m) => p.take(m));
      await new Promise<void>((r) => s.bind(0, '127.0.0.1', r));
      p.port = s.address().port;
    } else {
      const s = net.connect(serverPort, '127.0.0.1');
      p.tcp = s;
      await new Promise<void>((r, j) => s.once('connect', r).once('error', j));
      p.port = s.localPort!;
      let buf = Buffer.alloc(0);
      s.on('data', (d: Buffer) => {
        buf = Buffer.concat([buf, d]);
        for (;;) {
          const end = headEnd(buf);
          if (end < 0) return;
          const cl = Number(/content-length:\s*(\d+)/i.exec(buf.toString('latin1', 0, end))?.[1] ?? 0);
          if (buf.length < end + cl) return;
          p.take(buf.subarray(0, end + cl));
          buf = buf.subarray(end + cl);
        }
      });
      s.on('error', () => undefined);
    }
    return p;
  }

  private take(bytes: Buffer): void {
    const m = parseSipMessage(Buffer.from(bytes));
    this.received.push(m);
    const w = this.waiters.find((x) => x.match(m));
    if (w) {
      this.waiters = this.waiters.filter((x) => x !== w);
      w.resolve(m);
    }
  }

  send(text: string | Buffer): void {
    const b = typeof text === 'string' ? Buffer.from(text) : text;
    if (this.udp) this.udp.send(b, this.serverPort, '127.0.0.1');
    else this.tcp!.write(b);
  }

  /** The next message matching `match` (or one already received and not yet taken), within `ms`. */
  next(match: (m: SipMessage) => boolean, ms = 3000): Promise<SipMessage> {
    const had = this.received.findIndex(match);
    if (had >= 0) return Promise.resolve(this.received.splice(had, 1)[0]!);
    return new Promise((resolve, reject) => {
      const t = setTimeout(() => {
        this.waiters = this.waiters.filter((x) => x.resolve !== done);
        reject(new Error(`no matching SIP message within ${ms} ms; received: ${this.received.map((m) => (m.kind === 'response' ? `${m.status} ${m.cseq.method}` : m.method)).join(', ')}`));
      }, ms);
      const done = (m: SipMessage): void => {
        clearTimeout(t);
        const i = this.received.indexOf(m);
        if (i >= 0) this.received.splice(i, 1);
        resolve(m);
      };
      this.waiters.push({ match, resolve: done });
    });
  }

  response(status: number, method = 'INVITE', ms?: number): Promise<SipResponse> {
    return this.next((m) => m.kind === 'response' && m.status === status && m.cseq.method === method, ms) as Promise<SipResponse>;
  }

  request(method: string, ms?: number): Promise<SipRequest> {
    return this.next((m) => m.kind === 'request' && m.method === method, ms) as Promise<SipRequest>;
  }

  via(branch: string): string {
    return `SIP/2.0/${this.transport.toUpperCase()} 127.0.0.1:${this.port};branch=${branch}`;
  }

  /** A request of this peer's call `callId`. */
  build(method: string, o: { callId: string; cseq: number; branch?: string; toTag?: string; body?: string; contentType?: string; extra?: readonly string[]; uri?: string }): string {
    const body = o.body ?? '';
    return [
      `${method} ${o.uri ?? `sip:analytics@127.0.0.1:${this.serverPort}`} SIP/2.0`,
      `Via: ${this.via(o.branch ?? `z9hG4bK-${o.callId}-${method}-${o.cseq}`)}`,
      'Max-Forwards: 70',
      `From: "Test Caller" <sip:caller@127.0.0.1:${this.port}>;tag=${this.tag}`,
      `To: <sip:analytics@127.0.0.1:${this.serverPort}>${o.toTag ? `;tag=${o.toTag}` : ''}`,
      `Call-ID: ${o.callId}`,
      `CSeq: ${o.cseq} ${method}`,
      `Contact: <sip:caller@127.0.0.1:${this.port}${this.transport === 'tcp' ? ';transport=tcp' : ''}>`,
      ...(o.extra ?? []),
      ...(body ? [`Content-Type: ${o.contentType ?? 'application/sdp'}`] : []),
      `Content-Length: ${Buffer.byteLength(body)}`,
      '',
      body,
    ].join('\r\n');
  }

  /** Answer a request the server sent us (its BYE) with `status`. */
  answer(req: SipRequest, status: number): void {
    const lines = [`SIP/2.0 ${status} OK`, ...req.headers.list('via').map((v) => `Via: ${v}`), `From: ${req.headers.get('from')}`, `To: ${req.headers.get('to')}`, `Call-ID: ${req.callId}`, `CSeq: ${req.cseq.seq} ${req.cseq.method}`, 'Content-Length: 0', '', ''];
    this.send(lines.join('\r\n'));
  }

  close(): void {
    this.udp?.close();
    this.tcp?.destroy();
  }
}

/** The RTP port of the first audio stream of an SDP answer. */
export function answeredPort(res: SipResponse, n = 0): number {
  const ports = [...res.body.toString().matchAll(/^m=audio (\d+) /gm)].map((m) => Number(m[1]));
  return ports[n]!;
}
