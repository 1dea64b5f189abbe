// The RTP ports of the SIP server's calls: even ports of a range (RTP's, RFC 3550 §11), each a
// UDP socket bound while its stream lasts; a port someone else holds is skipped.
import dgram from 'node:dgram';

/** A range of UDP ports for RTP, both ends included. */
export interface PortRange {
  readonly min: number;
  readonly max: number;
}

export const DEFAULT_RTP_PORTS: PortRange = { min: 20000, max: 29999 };

/** Hands out bound sockets on even ports of a range, round-robin so a port just freed rests a while. */
export class RtpPorts {
  private readonly inUse = new Set<number>();
  private next: number;
  private readonly first: number;
  private readonly count: number;

  constructor(
    range: PortRange,
    private readonly host: string,
    private readonly recvBufferSize: number | undefined,
  ) {
    this.first = range.min + (range.min % 2);
    this.count = Math.max(0, Math.floor((range.max - this.first) / 2) + 1);
    this.next = 0;
  }

  /** Ports free now (not counting those some other process holds). */
  get free(): number {
    return this.count - this.inUse.size;
  }

  /** A socket bound on the next free even port, or undefined when none could be bound. */
  async open(): Promise<{ socket: dgram.Socket; port: number } | undefined> {
    for (let tries = 0; tries < Math.min(this.count, 64) && this.inUse.size < this.count; tries++) {
      const port = this.first + 2 * (this.next++ % this.count);
      if (this.inUse.has(port)) {
        tries--;
        continue;
      }
      this.inUse.add(port);
      const socket = await bind(this.host, port);
      if (socket) {
        if (this.recvBufferSize) socket.setRecvBufferSize(this.recvBufferSize);
        socket.once('close', () => this.inUse.delete(port));
        return { socket, port };
      }
      this.inUse.delete(port);
    }
    return undefined;
  }
}

function bind(host: string, port: number): Promise<dgram.Socket | undefined> {
  return new Promise((resolve) => {
    const socket = dgram.createSocket({ type: host.includes(':') ? 'udp6' : 'udp4' });
    const fail = (): void => {
      try {
        socket.close();
      } catch {
        /* never bound */
      }
      resolve(undefined);
    };
    socket.once('error', fail);
    // Exclusive: in a cluster worker the port is this worker's own.
    socket.bind({ address: host, port, exclusive: true }, () => {
      socket.off('error', fail);
      socket.on('error', () => undefined);
      resolve(socket);
    });
  });
}
