// `media-stream --demo`: the provider's part, played by a WebSocket client that streams the
// sample call (8 kHz mu-law) as Twilio or Telnyx media messages, 20 ms per message.
import { readFile } from 'node:fs/promises';
import { firstValueFrom, timer } from 'rxjs';
import WebSocket from 'ws';
import { samplePath } from '../samples.js';
import { twilioSignature } from '../telephony/mediaStreamAuth.js';

/** How the demo client connects and plays. */
export interface MediaStreamDemoOptions {
  /** `ws://host:port/path` of the bridge. */
  readonly url: string;
  readonly provider: 'twilio' | 'telnyx';
  /** Sent as `Authorization: Bearer …`. */
  readonly token?: string | undefined;
  /** Twilio's auth token: the upgrade is signed (`X-Twilio-Signature`) over `signedUrl`. */
  readonly twilioAuthToken?: string | undefined;
  /** The URL the signature covers (the bridge's public URL). Default `url`. */
  readonly signedUrl?: string | undefined;
  /** 1 = real time. */
  readonly speed: number;
  /** How much of the call, seconds. */
  readonly seconds: number;
  /** The audio: 8 kHz mu-law bytes. Default the sample call (`call-8k.mulaw`). */
  readonly audioPath?: string | undefined;
}

/** Play one call into the bridge: connected, start, media every 20 ms (numbers as strings), stop. */
export async function playMediaStreamDemo(options: MediaStreamDemoOptions): Promise<void> {
  const audio = (await readFile(options.audioPath ?? samplePath('call-8k.mulaw'))).subarray(0, Math.round(options.seconds * 8000));
  const headers: Record<string, string> = {};
  if (options.token) headers['authorization'] = `Bearer ${options.token}`;
  if (options.twilioAuthToken) headers['x-twilio-signature'] = twilioSignature(options.twilioAuthToken, options.signedUrl ?? options.url);
  const ws = new WebSocket(options.url, { headers });
  await new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve());
    ws.once('unexpected-response', (_req, res) => {
      res.resume();
      reject(new Error(`the bridge refused the demo call: HTTP ${res.statusCode}`));
    });
    ws.once('error', reject);
  });
  ws.on('error', () => undefined);
  const twilio = options.provider === 'twilio';
  const sid = twilio ? 'MZdemo0000000000000000000000000000' : 'demo-stream-0000';
  let seq = 1;
  const envelope = (event: string, body: object): string =>
    JSON.stringify(twilio ? { event, sequenceNumber: String(seq++), streamSid: sid, ...body } : { event, sequence_number: String(seq++), stream_id: sid, ...body });
  ws.send(JSON.stringify(twilio ? { event: 'connected', protocol: 'Call', version: '1.0.0' } : { event: 'connected', version: '1.0.0' }));
  ws.send(
    envelope('start', {
      start: twilio
        ? { streamSid: sid, accountSid: 'ACdemo', callSid: 'CAdemo', tracks: ['inbound'], mediaFormat: { encoding: 'audio/x-mulaw', sampleRate: 8000, channels: 1 } }
        : { call_control_id: 'v3:demo-call', media_format: { encoding: 'PCMU', sample_rate: 8000, channels: 1 } },
    }),
  );
  const t0 = Date.now();
  for (let k = 0; k * 160 < audio.length && ws.readyState === WebSocket.OPEN; k++) {
    const payload = audio.subarray(k * 160, (k + 1) * 160).toString('base64');
    ws.send(envelope('media', { media: { track: 'inbound', chunk: String(k + 1), timestamp: String(k * 20), payload } }));
    const wait = t0 + ((k + 1) * 20) / options.speed - Date.now();
    if (wait > 1) await firstValueFrom(timer(wait));
  }
  ws.send(envelope('stop', { stop: twilio ? { accountSid: 'ACdemo', callSid: 'CAdemo' } : {} }));
  ws.close();
}
