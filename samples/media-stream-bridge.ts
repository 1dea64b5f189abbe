// A WebSocket server for cloud telephony media streams (Twilio Media Streams, Telnyx Media
// Streaming) that analyses each call live and prints its roles and transcript:
// mediaStreamServer → analyzeCalls → per-call currentRoles$ and events$.
//
//   SVC_BRIDGE_TOKEN=… npx tsx samples/media-stream-bridge.ts [--port 8080] [--preset twilio|telnyx|auto] [--demo] [--speed X] [--seconds N] [--exit-after-call]
//
// Point the provider's stream URL at ws://HOST:PORT (behind a TLS proxy for wss). Connections
// must carry SVC_BRIDGE_TOKEN (`Authorization: Bearer …` or `?token=…`); for Twilio, whose
// stream URL takes no query, use `authenticate.twilio` instead (docs/telephony.md). --demo
// plays the provider's part itself, with a token of its own when none is set: a WebSocket
// client replays samples/call-8k.mulaw as media messages (numbers as strings, 20 ms each).
// With SVC_API_KEY and SVC_BASE_URL unset, an embedded emulator answers, playing
// samples/call.scenario.json.
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import WebSocket from 'ws';
import { startEmulator, type ScenarioInput } from 'svc-stream/emulator';
import { analyzeCalls, mediaStreamServer, type MediaStreamPresetName } from 'svc-stream/telephony';

const here = dirname(fileURLToPath(import.meta.url));

export interface MediaStreamBridgeOptions {
  readonly port?: number;
  readonly preset?: MediaStreamPresetName | 'auto';
  /** Replay the sample call as a provider would (Twilio field names unless preset is telnyx). */
  readonly demo?: boolean;
  /** Demo speed (1 = real time). */
  readonly speed?: number;
  /** Demo length, seconds. */
  readonly seconds?: number;
  readonly exitAfterCall?: boolean;
  /** The shared secret every connection must carry; default SVC_BRIDGE_TOKEN (--demo makes one when unset). */
  readonly token?: string;
  readonly print?: (line: string) => void;
}

async function endpoint(): Promise<{ apiKey: string; baseUrl: string; close: () => Promise<void> }> {
  const { SVC_API_KEY: apiKey, SVC_BASE_URL: baseUrl } = process.env;
  if (apiKey && baseUrl) return { apiKey, baseUrl, close: async () => undefined };
  const scenario = JSON.parse(readFileSync(join(here, 'call.scenario.json'), 'utf8')) as ScenarioInput;
  const emulator = await startEmulator({ scenario });
  return { apiKey: emulator.apiKey, baseUrl: emulator.baseUrl, close: () => emulator.close() };
}

/** Play a provider: connected, start, one media message per 20 ms (strings for numbers), stop. */
async function demoClient(url: string, token: string | undefined, provider: MediaStreamPresetName, speed: number, seconds: number): Promise<void> {
  const audio = readFileSync(join(here, 'call-8k.mulaw')).subarray(0, Math.round(seconds * 8000));
  const ws = new WebSocket(url, token ? { headers: { authorization: `Bearer ${token}` } } : {});
  await new Promise((resolve, reject) => ws.once('open', resolve).once('error', reject));
  const twilio = provider === 'twilio';
  const sid = twilio ? 'MZdemo0000000000000000000000000000' : 'demo-stream-0000';
  let seq = 1;
  const envelope = (event: string, body: object) =>
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
  for (let k = 0; k * 160 < audio.length; k++) {
    const payload = audio.subarray(k * 160, (k + 1) * 160).toString('base64');
    ws.send(envelope('media', { media: { track: 'inbound', chunk: String(k + 1), timestamp: String(k * 20), payload } }));
    const due = t0 + ((k + 1) * 20) / speed;
    const wait = due - Date.now();
    if (wait > 1) await new Promise((r) => setTimeout(r, wait));
  }
  ws.send(envelope('stop', { stop: twilio ? { accountSid: 'ACdemo', callSid: 'CAdemo' } : {} }));
  ws.close();
}

/** Run the bridge; resolves when the first call ended (with `exitAfterCall`), else never. */
export async function main(options: MediaStreamBridgeOptions = {}): Promise<void> {
  const print = options.print ?? ((line: string) => console.log(line));
  const token = options.token ?? process.env['SVC_BRIDGE_TOKEN'] ?? (options.demo ? randomBytes(18).toString('base64url') : undefined);
  if (token === undefined) print('warning: no SVC_BRIDGE_TOKEN: anyone who can reach this port can stream calls into your account');
  const { apiKey, baseUrl, close } = await endpoint();
  try {
    await new Promise<void>((resolve, reject) => {
      const calls$ = mediaStreamServer({
        port: options.port ?? 8080,
        preset: options.preset ?? 'auto',
        ...(token !== undefined ? { authenticate: { token } } : {}),
        onRefused: (refusal) => print(`refused a connection: ${refusal}`),
        onMalformed: (reason) => print(`malformed message: ${reason}`),
        onListening: ({ address, port }) => {
          print(`media streams on ws://${address}:${port}`);
          if (options.demo) {
            const provider = options.preset === 'telnyx' ? 'telnyx' : 'twilio';
            demoClient(`ws://127.0.0.1:${port}`, token, provider, options.speed ?? 1, options.seconds ?? 38).catch(reject);
          }
        },
      });
      const config = JSON.parse(readFileSync(join(here, 'call.config.json'), 'utf8')) as never;
      const sub = analyzeCalls(calls$, { apiKey, baseUrl, config, maxConcurrent: 3 }).subscribe({
        next: (call) => {
          const c = call.call;
          print(`${c.callId ?? c.id} (${c.preset}, ${c.track}): new call, ${call.status}`);
          let names = new Map<string, string>();
          call.streams.currentRoles$.subscribe({
            next: (roles) => {
              names = new Map(roles.toArray().map((r) => [r.speaker_label, r.name ?? '?']));
              print(`${c.callId ?? c.id}: roles ${[...names].map(([s, n]) => `${s}=${n}`).join(', ') || '(none)'}`);
            },
            error: () => undefined,
          });
          call.streams.events$.subscribe({
            next: (e) => {
              if (e.type !== 'clip') return;
              const who = e.clip.speaker_label ?? '?';
              print(`${c.callId ?? c.id}: [${((e.clip.start_ms ?? 0) / 1000).toFixed(1).padStart(5)}s] ${who}${names.get(who) ? ` (${names.get(who)})` : ''}: ${e.clip.text ?? ''}`);
            },
            error: () => undefined,
          });
          call.outcome$.subscribe((o) => {
            print(`${c.callId ?? c.id}: ${o.status}${o.error ? ` (${String(o.error)})` : ''}`);
            if (options.exitAfterCall) {
              sub.unsubscribe();
              resolve();
            }
          });
        },
        error: reject,
      });
    });
  } finally {
    await close();
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const { values } = parseArgs({
    options: {
      port: { type: 'string' },
      preset: { type: 'string' },
      demo: { type: 'boolean' },
      speed: { type: 'string' },
      seconds: { type: 'string' },
      'exit-after-call': { type: 'boolean' },
    },
  });
  await main({
    ...(values.port !== undefined ? { port: Number(values.port) } : {}),
    ...(values.preset !== undefined ? { preset: values.preset as MediaStreamPresetName | 'auto' } : {}),
    demo: values.demo === true,
    ...(values.speed !== undefined ? { speed: Number(values.speed) } : {}),
    ...(values.seconds !== undefined ? { seconds: Number(values.seconds) } : {}),
    exitAfterCall: values['exit-after-call'] === true,
  });
}
