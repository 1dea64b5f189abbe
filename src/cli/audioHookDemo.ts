// `audiohook --demo`: Genesys Cloud's part, played by a WebSocket client that opens an AudioHook
// session signed as Genesys signs it and streams the sample call as stereo PCMU (the customer's
// turns on `external`, the agent's on `internal`), 200 ms per frame, a hold on the way, a close.
import { randomUUID } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { firstValueFrom, timer } from 'rxjs';
import WebSocket from 'ws';
import { samplePath } from '../samples.js';
import { audioHookSignatureHeaders } from '../telephony/audioHookAuth.js';

/** How the demo client connects and plays. */
export interface AudioHookDemoOptions {
  /** `ws://host:port/path` of the server. */
  readonly url: string;
  readonly apiKey: string;
  /** The client secret (base64): the upgrade is signed with it. */
  readonly clientSecret: string | undefined;
  /** 1 = real time. */
  readonly speed: number;
  /** How much of the call, seconds. */
  readonly seconds: number;
  /** Pause this long (seconds of the call's time) at a third of the call (0: no pause). */
  readonly pauseSeconds: number;
  /** The audio: 8 kHz mu-law bytes. Default the sample call (`call-8k.mulaw`). */
  readonly audioPath?: string | undefined;
  /** Who speaks when (the sample scenario's transcript): the customer's turns go to `external`, the others to `internal`. */
  readonly turns: ReadonlyArray<{ readonly speaker_label: string; readonly role?: string | undefined; readonly start_ms: number; readonly end_ms: number }>;
}

/** The call's two sides, one byte per sample each: every turn's audio on its speaker's side, silence elsewhere. */
export function splitBySpeaker(mulaw: Uint8Array, turns: AudioHookDemoOptions['turns']): { external: Uint8Array; internal: Uint8Array } {
  const external = new Uint8Array(mulaw.length).fill(0xff);
  const internal = new Uint8Array(mulaw.length).fill(0xff);
  for (const t of turns) {
    const side = t.role === 'customer' ? external : internal;
    const from = Math.min(mulaw.length, Math.round(t.start_ms * 8));
    const to = Math.min(mulaw.length, Math.round(t.end_ms * 8));
    side.set(mulaw.subarray(from, to), from);
  }
  return { external, internal };
}

/**
 * The sample scenario for the demo's stereo call: its speaker labels 1 and 2 swapped (the
 * sample's agent is speaker 1; a multi-channel session labels each channel's speaker by its
 * channel, and AudioHook's first channel is the customer's), and without the recording it names
 * (the emulator aligns a script to its named audio only for a mono session: this one plays from
 * its top, which is where the demo starts).
 */
export function customerFirstScenario<T>(scenario: T): T {
  const swap = (v: unknown): unknown => {
    if (Array.isArray(v)) return v.map(swap);
    if (v !== null && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, k === 'speaker_label' && (x === '1' || x === '2') ? (x === '1' ? '2' : '1') : swap(x)]));
    if (typeof v === 'string') return v.replace(/Speaker ([12])/g, (_m, n: string) => `Speaker ${n === '1' ? '2' : '1'}`);
    return v;
  };
  const { audio: _named, ...rest } = swap(scenario) as Record<string, unknown>;
  return rest as T;
}

const FRAME_SAMPLES = 1600;

/** Play one session into the server: open, audio, paused/resumed, close; resolves after `closed`. */
export async function playAudioHookDemo(options: AudioHookDemoOptions): Promise<void> {
  const audio = (await readFile(options.audioPath ?? samplePath('call-8k.mulaw'))).subarray(0, Math.round(options.seconds * 8000));
  const id = randomUUID();
  const headers = audioHookSignatureHeaders({
    url: options.url,
    apiKey: options.apiKey,
    clientSecret: options.clientSecret,
    organizationId: '2b7b3c2e-0000-4000-8000-00000000d3e0',
    sessionId: id,
    correlationId: randomUUID(),
  });
  const ws = new WebSocket(options.url, { headers, perMessageDeflate: false });
  await new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve());
    ws.once('unexpected-response', (_req, res) => {
      res.resume();
      reject(new Error(`the server refused the demo session: HTTP ${res.statusCode}`));
    });
    ws.once('error', reject);
  });
  const replies: Array<{ type: string; seq: number }> = [];
  let wake: (() => void) | undefined;
  ws.on('message', (data) => {
    replies.push(JSON.parse(String(data)) as { type: string; seq: number });
    wake?.();
  });
  ws.on('error', () => undefined);
  const reply = async (type: string): Promise<void> => {
    while (!replies.some((r) => r.type === type)) {
      if (ws.readyState !== WebSocket.OPEN) throw new Error(`the server closed the demo session before '${type}'`);
      await new Promise<void>((r) => (wake = r));
    }
  };
  let seq = 0;
  let samples = 0;
  const send = (type: string, parameters: object): void => {
    const serverseq = replies.reduce((m, r) => Math.max(m, r.seq), 0);
    ws.send(JSON.stringify({ version: '2', id, type, seq: ++seq, serverseq, position: `PT${samples / 8000}S`, parameters }));
  };
  send('open', {
    organizationId: '2b7b3c2e-0000-4000-8000-00000000d3e0',
    conversationId: randomUUID(),
    participant: { id: randomUUID(), ani: '+1-555-555-0100', aniName: 'Demo Caller', dnis: '+1-800-555-0199' },
    media: [['external', 'internal'], ['external'], ['internal']].map((channels) => ({ type: 'audio', format: 'PCMU', channels, rate: 8000 })),
    language: 'en-US',
  });
  await reply('opened');
  const { external, internal } = splitBySpeaker(audio, options.turns);
  // The hold: at a third of the call, its audio is not sent (Genesys discards it), the time goes on.
  const pauseAt = options.pauseSeconds > 0 ? Math.floor(audio.length / 3 / FRAME_SAMPLES) * FRAME_SAMPLES : -1;
  const t0 = Date.now();
  for (let at = 0; at < audio.length && ws.readyState === WebSocket.OPEN; ) {
    if (at === pauseAt) {
      send('paused', {});
      const start = `PT${samples / 8000}S`;
      const held = Math.min(options.pauseSeconds * 8000, audio.length - at);
      await firstValueFrom(timer(held / 8 / options.speed));
      at += held;
      samples += held;
      send('resumed', { start, discarded: `PT${held / 8000}S` });
      continue;
    }
    const n = Math.min(FRAME_SAMPLES, audio.length - at);
    const frame = Buffer.alloc(n * 2);
    for (let i = 0; i < n; i++) {
      frame[2 * i] = external[at + i]!;
      frame[2 * i + 1] = internal[at + i]!;
    }
    ws.send(frame, { binary: true });
    at += n;
    samples += n;
    const wait = t0 + samples / 8 / options.speed - Date.now();
    if (wait > 1) await firstValueFrom(timer(wait));
  }
  send('close', { reason: 'end' });
  await reply('closed');
  ws.close();
}
