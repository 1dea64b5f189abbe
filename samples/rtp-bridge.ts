// Take RTP calls on a UDP port and print each call's roles and transcript live:
// rtpSource → analyzeCalls → per-call currentRoles$ and events$.
//
//   npx tsx samples/rtp-bridge.ts [--port 5004] [--spawn-ffmpeg] [--speed X] [--seconds N] [--exit-after-call]
//
// Send a call from another shell:
//   ffmpeg -re -i samples/call.wav -ar 8000 -ac 1 -acodec pcm_mulaw -f rtp rtp://127.0.0.1:5004
// or pass --spawn-ffmpeg to have this sample start that sender itself (a self-contained demo;
// --speed 4 sends four times faster than real time). With SVC_API_KEY and SVC_BASE_URL unset,
// an embedded emulator answers, playing samples/call.scenario.json.
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { startEmulator, type ScenarioInput } from 'svc-stream/emulator';
// Telephony is imported from the source tree until the package barrel re-exports it.
import { analyzeCalls, rtpSource } from 'svc-stream/telephony';

const here = dirname(fileURLToPath(import.meta.url));

export interface RtpBridgeOptions {
  readonly port?: number;
  /** Start `ffmpeg … -f rtp` sending samples/call.wav to the port. */
  readonly spawnFfmpeg?: boolean;
  /** ffmpeg's read rate (1 = real time). */
  readonly speed?: number;
  /** Send only the first N seconds. */
  readonly seconds?: number;
  /** Resolve after the first call has ended. */
  readonly exitAfterCall?: boolean;
  /** A call ends after this long without packets, ms. */
  readonly idleTimeoutMs?: number;
  readonly print?: (line: string) => void;
}

async function endpoint(): Promise<{ apiKey: string; baseUrl: string; close: () => Promise<void> }> {
  const { SVC_API_KEY: apiKey, SVC_BASE_URL: baseUrl } = process.env;
  if (apiKey && baseUrl) return { apiKey, baseUrl, close: async () => undefined };
  const scenario = JSON.parse(readFileSync(join(here, 'call.scenario.json'), 'utf8')) as ScenarioInput;
  const emulator = await startEmulator({ scenario });
  return { apiKey: emulator.apiKey, baseUrl: emulator.baseUrl, close: () => emulator.close() };
}

function sendWithFfmpeg(port: number, speed: number, seconds: number | undefined): ChildProcess {
  const args = ['-hide_banner', '-loglevel', 'error', '-nostdin', '-readrate', String(speed), '-i', join(here, 'call.wav')];
  if (seconds !== undefined) args.push('-t', String(seconds));
  args.push('-ar', '8000', '-ac', '1', '-acodec', 'pcm_mulaw', '-payload_type', '0', '-f', 'rtp', `rtp://127.0.0.1:${port}?pkt_size=172`);
  return spawn('ffmpeg', args, { stdio: ['ignore', 'ignore', 'inherit'] });
}

/** Run the bridge; resolves when the first call ended (with `exitAfterCall`), else never. */
export async function main(options: RtpBridgeOptions = {}): Promise<void> {
  const print = options.print ?? ((line: string) => console.log(line));
  const { apiKey, baseUrl, close } = await endpoint();
  let sender: ChildProcess | undefined;
  try {
    await new Promise<void>((resolve, reject) => {
      const legs$ = rtpSource({
        port: options.port ?? 5004,
        idleTimeoutMs: options.idleTimeoutMs ?? 2000,
        onListening: ({ address, port }) => {
          print(`listening for RTP on ${address}:${port}`);
          if (options.spawnFfmpeg) sender = sendWithFfmpeg(port, options.speed ?? 1, options.seconds);
        },
      });
      const config = JSON.parse(readFileSync(join(here, 'call.config.json'), 'utf8')) as never;
      const sub = analyzeCalls(legs$, { apiKey, baseUrl, config, maxConcurrent: 3 }).subscribe({
        next: (call) => {
          print(`${call.id}: new call (${call.call.codec.name}), ${call.status}`);
          let names = new Map<string, string>();
          call.streams.currentRoles$.subscribe({
            next: (roles) => {
              names = new Map(roles.toArray().map((r) => [r.speaker_label, r.name ?? '?']));
              print(`${call.id}: roles ${[...names].map(([s, n]) => `${s}=${n}`).join(', ') || '(none)'}`);
            },
            error: () => undefined,
          });
          call.streams.events$.subscribe({
            next: (e) => {
              if (e.type !== 'clip') return;
              const c = e.clip;
              const who = c.speaker_label ?? '?';
              print(`${call.id}: [${((c.start_ms ?? 0) / 1000).toFixed(1).padStart(5)}s] ${who}${names.get(who) ? ` (${names.get(who)})` : ''}: ${c.text ?? ''}`);
            },
            error: () => undefined,
          });
          call.outcome$.subscribe((o) => {
            const s = call.call.stats;
            print(`${call.id}: ${o.status}${o.error ? ` (${String(o.error)})` : ''}; packets ${s.received}, lost ${s.lost}, late ${s.late}, duplicated ${s.duplicated}, reordered ${s.reordered}`);
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
    sender?.kill();
    await close();
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const { values } = parseArgs({
    options: {
      port: { type: 'string' },
      'spawn-ffmpeg': { type: 'boolean' },
      speed: { type: 'string' },
      seconds: { type: 'string' },
      'exit-after-call': { type: 'boolean' },
    },
  });
  await main({
    ...(values.port !== undefined ? { port: Number(values.port) } : {}),
    spawnFfmpeg: values['spawn-ffmpeg'] === true,
    ...(values.speed !== undefined ? { speed: Number(values.speed) } : {}),
    ...(values.seconds !== undefined ? { seconds: Number(values.seconds) } : {}),
    exitAfterCall: values['exit-after-call'] === true,
  });
}
