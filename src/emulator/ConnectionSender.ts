// The bytes an emulated streaming connection sends, and how it stops: text frames (counted),
// the `error` event before every non-normal close (§6 rule 3), the close and the cut of a peer
// that never answers it, and the scripted ways a server goes quiet (stall, stop reading,
// silence). Nothing here decides when: the connection (StreamingConnection.ts) does.
import type { Socket } from 'node:net';
import WebSocket from 'ws';
import type { ErrorWireEvent } from './engineEvents.js';

/** How long a closed connection's peer gets to answer the close frame before the socket is cut. */
const CLOSE_GRACE_MS = 2_000;

/** The outbound side of one connection. */
export class ConnectionSender {
  /** Text frames sent. */
  eventsSent = 0;
  /** The close code sent, once closed. */
  closeCode: number | undefined;
  /** Closed (or dropped): nothing more is sent. */
  closed = false;
  /** A scripted stall: the server never answers again. */
  stalled = false;

  constructor(
    private readonly ws: WebSocket,
    /** The raw socket, which the scripted faults pause (the upgrade's own socket: public, unlike ws's). */
    private readonly socket: Socket,
    /** Called once when the connection closes or is dropped (stop timers, free the decoder). */
    private readonly onClosing: () => void,
  ) {}

  /** Send one text frame, unless stalled or closed. */
  send(text: string): void {
    if (this.stalled || this.closed) return;
    if (this.ws.readyState === WebSocket.OPEN) {
      this.ws.send(text);
      this.eventsSent++;
    }
  }

  /**
   * A note for the client beside the contract's messages: a ping whose payload is `text` (at
   * most 125 bytes), sent in order with the text frames; a client that does not read it answers
   * the ping and sees nothing else. Not sent when stalled or closed.
   */
  note(text: string): void {
    if (this.stalled || this.closed || this.ws.readyState !== WebSocket.OPEN) return;
    this.ws.ping(Buffer.from(text.slice(0, 125), 'utf8'));
  }

  /** Send an `error` event, then close with `code` (§6 rule 3: an error precedes every non-normal close). */
  reject(code: number, error: string): void {
    if (this.closed) return;
    this.send(JSON.stringify({ type: 'error', error } satisfies ErrorWireEvent));
    this.close(code, '');
  }

  /** Close with `code`; a peer that does not answer is cut after the grace. */
  close(code: number, reason: string): void {
    if (this.closed) return;
    this.markClosed(code);
    this.ws.close(code, reason);
    this.terminateLater();
  }

  /**
   * `ws` refused a frame and sends its close frame itself (reading nothing more): say why
   * first, then only the cut remains.
   */
  refusedFrame(code: number, error: string): void {
    if (this.closed) return;
    this.send(JSON.stringify({ type: 'error', error } satisfies ErrorWireEvent));
    this.markClosed(code);
    this.terminateLater();
  }

  /** A TCP drop mid-session: no close frame. */
  drop(): void {
    this.markClosed(undefined);
    this.ws.terminate();
  }

  /** Never answer again (the server hangs). */
  stall(): void {
    this.stalled = true;
  }

  /** Stop reading the socket: backpressure reaches the client; the server says nothing more. */
  stopReading(): void {
    this.socket.pause();
    this.stalled = true;
  }

  /** A planned restart lifts a stall: the going-away close is sent. */
  resume(): void {
    this.stalled = false;
  }

  private markClosed(code: number | undefined): void {
    this.closed = true;
    this.closeCode = code;
    this.onClosing();
  }

  /** A client that never answers the close frame must not hold the emulator's socket. */
  private terminateLater(): void {
    const t = setTimeout(() => this.ws.terminate(), CLOSE_GRACE_MS);
    t.unref();
  }
}
