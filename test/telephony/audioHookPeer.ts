// A scripted AudioHook client for the tests: connects with Genesys' headers (signed or not),
// sends each message as the reference client builds it (seq, serverseq, position), and hands
// the server's messages back one at a time.
import WebSocket from 'ws';
import { audioHookSignatureHeaders } from '../../src/telephony/audioHookAuth.js';

export interface ServerMessage {
  readonly version: string;
  readonly id: string;
  readonly type: string;
  readonly seq: number;
  readonly clientseq: number;
  readonly parameters: Record<string, unknown>;
}

export const ORG = 'd7934305-0972-4844-938e-9060eef73d05';

export interface PeerOptions {
  readonly sessionId: string;
  readonly apiKey?: string | undefined;
  readonly clientSecret?: string | undefined;
  /** Seconds since the epoch, for the signature (default now). */
  readonly created?: number | undefined;
  /** Headers to send instead of the ones made (a hostile client). */
  readonly headers?: Record<string, string> | undefined;
}

/** Connect; rejects with `HTTP <status>` (and the response's headers) when the upgrade is refused. */
export function connectPeer(url: string, options: PeerOptions): Promise<Peer> {
  const headers =
    options.headers ??
    audioHookSignatureHeaders({
      url,
      apiKey: options.apiKey ?? 'test-key',
      clientSecret: options.clientSecret,
      organizationId: ORG,
      sessionId: options.sessionId,
      correlationId: 'e160e428-53e2-487c-977d-96989bf5c99d',
      created: options.created,
    });
  const ws = new WebSocket(url, { headers, perMessageDeflate: false });
  return new Promise((resolve, reject) => {
    ws.once('open', () => resolve(new Peer(ws, options.sessionId)));
    ws.once('unexpected-response', (_req, res) => {
      res.resume();
      const err = Object.assign(new Error(`HTTP ${res.statusCode}`), { status: res.statusCode, headers: res.headers });
      ws.terminate();
      reject(err);
    });
    ws.once('error', reject);
  });
}

export class Peer {
  seq = 0;
  serverseq = 0;
  /** Samples per channel of the stream sent (the position every message carries). */
  samples = 0;
  readonly received: ServerMessage[] = [];
  private readonly waiting: Array<(m: ServerMessage) => void> = [];
  private readonly queue: ServerMessage[] = [];
  readonly closed: Promise<number>;

  constructor(
    readonly ws: WebSocket,
    readonly id: string,
  ) {
    ws.on('error', () => undefined);
    ws.on('message', (data, isBinary) => {
      if (isBinary) return;
      const m = JSON.parse(String(data)) as ServerMessage;
      this.received.push(m);
      this.serverseq = m.seq;
      const w = this.waiting.shift();
      if (w) w(m);
      else this.queue.push(m);
    });
    this.closed = new Promise((resolve) => ws.once('close', (code) => resolve(code)));
  }

  get position(): string {
    return `PT${this.samples / 8000}S`;
  }

  /** Send a client message; returns it. */
  send(type: string, parameters: object, over: Record<string, unknown> = {}): Record<string, unknown> {
    const m = { version: '2', id: this.id, type, seq: ++this.seq, serverseq: this.serverseq, position: this.position, parameters, ...over };
    this.ws.send(JSON.stringify(m));
    return m;
  }

  /** Send audio: `bytes` of interleaved samples, `channels` per frame, one byte each (PCMU). */
  audio(bytes: Uint8Array, channels = 2, bytesPerSample = 1): void {
    this.ws.send(bytes, { binary: true });
    this.samples += bytes.byteLength / (channels * bytesPerSample);
  }

  /** The next server message (bounded). */
  next(ms = 5000): Promise<ServerMessage> {
    const m = this.queue.shift();
    if (m) return Promise.resolve(m);
    return new Promise((resolve, reject) => {
      const t = setTimeout(() => reject(new Error(`no server message within ${ms} ms (got ${this.received.map((r) => r.type).join(', ')})`)), ms);
      this.waiting.push((msg) => {
        clearTimeout(t);
        resolve(msg);
      });
    });
  }

  /** The standard `open` of a call, offering `media` (default: both sides, then each alone, PCMU). */
  open(media?: readonly object[], conversationId = '090eaa2f-72fa-480a-83e0-8667ff89c0ec'): Record<string, unknown> {
    const offers = media ?? [['external', 'internal'], ['external'], ['internal']].map((channels) => ({ type: 'audio', format: 'PCMU', channels, rate: 8000 }));
    return this.send('open', {
      organizationId: ORG,
      conversationId,
      participant: { id: '883efee8-3d6c-4537-b500-6d7ca4b92fa0', ani: '+1-555-555-1234', aniName: 'John Doe', dnis: '+1-800-555-6789' },
      media: offers,
      language: 'en-US',
      customConfig: { campaign: 'renewals' },
    });
  }
}

/** Interleave two equal-length mono tracks of one byte per sample: external first. */
export function interleave(external: Uint8Array, internal: Uint8Array): Uint8Array {
  const out = new Uint8Array(external.byteLength * 2);
  for (let i = 0; i < external.byteLength; i++) {
    out[2 * i] = external[i]!;
    out[2 * i + 1] = internal[i]!;
  }
  return out;
}
