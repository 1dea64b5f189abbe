// The SIP server's transports: one UDP socket and one TCP listener on the same port. A datagram
// is one message; a TCP stream is cut into messages by Content-Length, bounded, keep-alive CRLFs
// skipped. Bytes go back the way the request came (RFC 3261 §18.2.2, RFC 3581's rport).
import dgram from 'node:dgram';
import net from 'node:net';
import { headEnd, SipParseError, type SipLimits } from './sipMessage.js';

/** Where a message came from, and how to answer it. */
export type SipPeer =
  | { readonly transport: 'udp'; readonly address: string; readonly port: number }
  | { readonly transport: 'tcp'; readonly address: string; readonly port: number; readonly socket: net.Socket };

/** What the transports tell the server. */
export interface SipTransportEvents {
  message(bytes: Buffer, peer: SipPeer): void;
  /** Bytes that are not a message at all (a TCP stream over its bounds): counted, the connection closed. */
  refused(error: SipParseError, peer: SipPeer): void;
  /** A TCP connection over `maxConnections`, closed at once. */
  overCapacity(peer: SipPeer): void;
  /** A TCP connection taken. */
  connected(peer: SipPeer): void;
}

export interface SipTransportOptions {
  readonly host: string;
  readonly port: number;
  readonly transports: readonly ('udp' | 'tcp')[];
  readonly limits: SipLimits;
  readonly maxConnections: number;
  /** A TCP connection with nothing to say for this long is closed, ms. */
  readonly idleMs: number;
  readonly recvBufferSize: number | undefined;
}

/** The listening sockets; `listen` resolves with the port they share. */
export class SipTransport {
  private udp: dgram.Socket | undefined;
  private tcp: net.Server | undefined;
  private readonly connections = new Set<net.Socket>();
  private closed = false;

  constructor(
    private readonly options: SipTransportOptions,
    private readonly events: SipTransportEvents,
  ) {}

  /**
   * Bind UDP, then TCP on the same port. Port 0: UDP picks a free one and TCP follows; a TCP
   * port someone else holds (a free UDP port says nothing of TCP's) makes it try another, a few times.
   */
  async listen(): Promise<{ address: string; port: number }> {
    for (let attempt = 0; ; attempt++) {
      try {
        return await this.bindBoth();
      } catch (err) {
        const retry = this.options.port === 0 && (err as NodeJS.ErrnoException).code === 'EADDRINUSE' && attempt < 8;
        this.closeListeners();
        if (!retry) throw err;
      }
    }
  }

  private closeListeners(): void {
    try {
      this.udp?.close();
    } catch {
      /* not bound */
    }
    this.tcp?.close();
    this.udp = undefined;
    this.tcp = undefined;
  }

  private async bindBoth(): Promise<{ address: string; port: number }> {
    const { host, transports } = this.options;
    let port = this.options.port;
    if (transports.includes('udp')) {
      const udp = dgram.createSocket({ type: host.includes(':') ? 'udp6' : 'udp4' });
      this.udp = udp;
      await new Promise<void>((resolve, reject) => {
        udp.once('error', reject);
        udp.bind({ address: host, port, exclusive: true }, () => {
          udp.off('error', reject);
          resolve();
        });
      });
      if (this.options.recvBufferSize) udp.setRecvBufferSize(this.options.recvBufferSize);
      port = udp.address().port;
      udp.on('error', () => undefined);
      udp.on('message', (msg, rinfo) => {
        if (this.closed) return;
        // A keep-alive (RFC 5626 §4.4.1: CRLF CRLF) or a stray: nothing to read.
        if (msg.length <= 4 && msg.every((b) => b === 13 || b === 10)) return;
        this.events.message(msg, { transport: 'udp', address: rinfo.address, port: rinfo.port });
      });
    }
    if (transports.includes('tcp')) {
      const tcp = net.createServer((s) => this.onConnection(s));
      this.tcp = tcp;
      await new Promise<void>((resolve, reject) => {
        tcp.once('error', reject);
        tcp.listen({ host, port, exclusive: true }, () => {
          tcp.off('error', reject);
          resolve();
        });
      });
      port = (tcp.address() as net.AddressInfo).port;
      tcp.on('error', () => undefined);
    }
    return { address: host, port };
  }

  private onConnection(socket: net.Socket): void {
    const peer: SipPeer = { transport: 'tcp', address: socket.remoteAddress ?? '', port: socket.remotePort ?? 0, socket };
    socket.on('error', () => undefined);
    if (this.closed || this.connections.size >= this.options.maxConnections) {
      this.events.overCapacity(peer);
      socket.destroy();
      return;
    }
    this.connections.add(socket);
    this.events.connected(peer);
    socket.once('close', () => this.connections.delete(socket));
    socket.setNoDelay(true);
    socket.setTimeout(this.options.idleMs, () => socket.destroy());
    const { maxMessageBytes } = this.options.limits;
    let buf: Buffer = Buffer.alloc(0);
    socket.on('data', (data: Buffer) => {
      buf = buf.length === 0 ? data : Buffer.concat([buf, data]);
      for (;;) {
        // Keep-alive CRLFs between messages.
        let skip = 0;
        while (skip < buf.length && (buf[skip] === 13 || buf[skip] === 10)) skip++;
        if (skip > 0) buf = buf.subarray(skip);
        if (buf.length === 0) return;
        const end = headEnd(buf);
        if (end < 0) {
          if (buf.length > maxMessageBytes) return this.refuse(socket, peer, new SipParseError('too_large', `a head of over ${maxMessageBytes} bytes`));
          return;
        }
        const cl = /\r\n(?:content-length|l)[ \t]*:[ \t]*(\d{1,9})[ \t]*\r\n/i.exec(buf.toString('latin1', 0, end));
        if (!cl) return this.refuse(socket, peer, new SipParseError('bad_content_length', 'no Content-Length on a stream transport'));
        const total = end + Number(cl[1]);
        if (total > maxMessageBytes) return this.refuse(socket, peer, new SipParseError('too_large', `a message of ${total} bytes is over ${maxMessageBytes}`));
        if (buf.length < total) return;
        const message = buf.subarray(0, total);
        buf = buf.subarray(total);
        this.events.message(message, peer);
        if (socket.destroyed) return;
      }
    });
  }

  private refuse(socket: net.Socket, peer: SipPeer, error: SipParseError): void {
    this.events.refused(error, peer);
    socket.destroy();
  }

  /** Send bytes to a peer: over UDP to its address, over TCP on its connection (false when it is gone). */
  send(peer: SipPeer, bytes: Buffer): boolean {
    if (this.closed) return false;
    if (peer.transport === 'tcp') {
      if (peer.socket.destroyed) return false;
      peer.socket.write(bytes);
      return true;
    }
    this.udp?.send(bytes, peer.port, peer.address);
    return true;
  }

  /** Whether a UDP socket is open (a request to a peer whose TCP connection is gone goes there). */
  get hasUdp(): boolean {
    return this.udp !== undefined;
  }

  close(): void {
    this.closed = true;
    try {
      this.udp?.close();
    } catch {
      /* closed */
    }
    this.tcp?.close();
    for (const s of this.connections) s.destroy();
    this.connections.clear();
  }
}
