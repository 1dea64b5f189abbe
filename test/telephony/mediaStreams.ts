// Shared by the media-stream tests: a server on a free port with its calls, a provider's
// session as its messages, and a plain ws client that says how the server answered.
import { readFileSync } from 'node:fs';
import type { Subscription } from 'rxjs';
import WebSocket from 'ws';
import { createMediaStreamServerStats, mediaStreamServer, type MediaStreamCall, type MediaStreamServerOptions, type MediaStreamServerStats } from 'svc-stream/telephony';
import { SAMPLE_MULAW } from './helpers.js';

export const MULAW = readFileSync(SAMPLE_MULAW);
/** What the tests started: unsubscribed and terminated by `cleanUp` after each. */
const subs: Subscription[] = [];
const clients: WebSocket[] = [];

/** A client of the test's own, terminated after it. */
export function trackClient(ws: WebSocket): WebSocket {
  clients.push(ws);
  return ws;
}

export function cleanUp(): void {
  for (const c of clients.splice(0)) c.terminate();
  subs.splice(0).forEach((s) => s.unsubscribe());
}

export interface Served {
  readonly port: number;
  readonly url: string;
  readonly stats: MediaStreamServerStats;
  readonly calls: MediaStreamCall[];
  /** The next call not yet taken, in arrival order. */
  next(): Promise<MediaStreamCall>;
}

/** A server on a free port; its calls in arrival order. */
export async function serve(options: MediaStreamServerOptions = {}): Promise<Served> {
  const stats = options.stats ?? createMediaStreamServerStats();
  const calls: MediaStreamCall[] = [];
  const waiters: Array<(c: MediaStreamCall) => void> = [];
  let resolvePort!: (p: number) => void;
  const port = new Promise<number>((r) => (resolvePort = r));
  subs.push(
    mediaStreamServer({ ...options, stats, onListening: (a) => resolvePort(a.port) }).subscribe((c) => {
      calls.push(c);
      waiters.shift()?.(c);
    }),
  );
  let taken = 0;
  const next = (): Promise<MediaStreamCall> => {
    const i = taken++;
    return calls[i] ? Promise.resolve(calls[i]!) : new Promise((r) => waiters.push(r));
  };
  const p = await port;
  return { port: p, url: `ws://127.0.0.1:${p}`, stats, calls, next };
}

/** A recorded-format session: 20 ms media messages, every number a string, as providers send them. */
export function messages(provider: 'twilio' | 'telnyx', ms: number, tracks: Array<'inbound' | 'outbound'> = ['inbound']): string[] {
  const sid = provider === 'twilio' ? 'MZ0123456789abcdef' : '32DE0DEA-53CB-4B21-89A4-9E1819C043BC';
  const out: object[] = [];
  let seq = 1;
  if (provider === 'twilio') {
    out.push({ event: 'connected', protocol: 'Call', version: '1.0.0' });
    out.push({ event: 'start', sequenceNumber: String(seq++), streamSid: sid, start: { streamSid: sid, accountSid: 'AC1', callSid: 'CA42', tracks, customParameters: { who: 'test' }, mediaFormat: { encoding: 'audio/x-mulaw', sampleRate: 8000, channels: 1 } } });
  } else {
    out.push({ event: 'connected', version: '1.0.0' });
    out.push({ event: 'start', sequence_number: String(seq++), stream_id: sid, start: { call_control_id: 'v3:call-42', custom_parameters: { who: 'test' }, media_format: { encoding: 'PCMU', sample_rate: 8000, channels: 1 } } });
  }
  for (let k = 0; k < ms / 20; k++) {
    for (const track of tracks) {
      const payload = MULAW.subarray(k * 160 + (track === 'outbound' ? 80_000 : 0), (k + 1) * 160 + (track === 'outbound' ? 80_000 : 0)).toString('base64');
      const media = { track, chunk: String(k + 1), timestamp: String(k * 20), payload };
      out.push(provider === 'twilio' ? { event: 'media', sequenceNumber: String(seq++), streamSid: sid, media } : { event: 'media', sequence_number: String(seq++), stream_id: sid, media });
    }
  }
  out.push(provider === 'twilio' ? { event: 'stop', sequenceNumber: String(seq++), streamSid: sid, stop: { accountSid: 'AC1', callSid: 'CA42' } } : { event: 'stop', sequence_number: String(seq++), stream_id: sid, stop: {} });
  return out.map((m) => JSON.stringify(m));
}


export async function replay(url: string, frames: readonly string[]): Promise<void> {
  const ws = new WebSocket(url);
  await new Promise((r, j) => ws.once('open', r).once('error', j));
  await Promise.all(frames.map((f) => new Promise<void>((r) => ws.send(f, () => r()))));
  ws.close();
}


export interface Outcome {
  /** HTTP status of a refused upgrade, or 101. */
  readonly status: number;
  readonly closeCode?: number | undefined;
  readonly reason?: string | undefined;
}

/** Connect, send `frames`, close, and report how the server answered. */
export function attempt(url: string, headers: Record<string, string> = {}, frames: readonly (string | Buffer)[] = []): Promise<Outcome> {
  return new Promise((resolve) => {
    const ws = new WebSocket(url, { headers });
    clients.push(ws);
    let status = 0;
    ws.on('unexpected-response', (_req, res) => {
      status = res.statusCode ?? 0;
      res.resume();
      ws.terminate();
      resolve({ status });
    });
    ws.on('upgrade', () => (status = 101));
    ws.on('open', () => {
      for (const f of frames) ws.send(f);
      ws.close();
    });
    ws.on('error', () => undefined);
    ws.on('close', (code, reason) => resolve({ status, closeCode: code, reason: reason.toString() }));
  });
}


/** A short Twilio session ending in `stop`. */
export function twilioSession(sid: string, ms = 200): string[] {
  const out: object[] = [
    { event: 'connected', protocol: 'Call', version: '1.0.0' },
    { event: 'start', sequenceNumber: '1', streamSid: sid, start: { streamSid: sid, callSid: 'CA1', tracks: ['inbound'], mediaFormat: { encoding: 'audio/x-mulaw', sampleRate: 8000, channels: 1 } } },
  ];
  for (let k = 0; k < ms / 20; k++) {
    out.push({ event: 'media', streamSid: sid, media: { track: 'inbound', chunk: String(k + 1), timestamp: String(k * 20), payload: MULAW.subarray(k * 160, (k + 1) * 160).toString('base64') } });
  }
  out.push({ event: 'stop', streamSid: sid, stop: {} });
  return out.map((m) => JSON.stringify(m));
}
