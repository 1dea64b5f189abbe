// `svc-stream media-stream`: a bridge for Twilio/Telnyx media streams that analyses each call
// as it comes, printing what `analyze` prints, per call.
import { randomBytes } from 'node:crypto';
import { parseArgs } from 'node:util';
import { InputError } from '../../errors.js';
import { analyzeCalls, createAnalyzeCallsStats } from '../../telephony/analyzeCalls.js';
import type { MediaStreamAuth } from '../../telephony/mediaStreamAuth.js';
import { createMediaStreamServerStats, mediaStreamServer } from '../../telephony/mediaStreamServer.js';
import { showCalls } from '../callView.js';
import { configFlag, printError, readJsonFile, type CliIo, type Command } from '../command.js';
import { openEndpoint } from '../endpoint.js';
import { playMediaStreamDemo } from '../mediaStreamDemo.js';
import { minFlag } from '../numberFlag.js';
import { fleetLimits, REDIS_HELP, REDIS_OPTION } from '../redisFlag.js';
import { resultSource, resultSourceNote } from '../resultSource.js';
import { samplePath } from '../../samples.js';

const USAGE = `Usage: svc-stream media-stream [options]

A WebSocket bridge for cloud-telephony media streams (Twilio Media Streams, Telnyx Media
Streaming): point the provider's stream URL at it, and each call is analysed live in its own
session, one line per result prefixed with the call's id (or NDJSON with --json).

Options:
  --port N              port (default 8080; 0 picks a free one, printed on stderr)
  --host H              interface (default 127.0.0.1; any other needs --token or --twilio-auth-token)
  --path P              accept upgrades on this path only (default: any)
  --preset P            twilio, telnyx or auto (default auto: told by each start message)
  --tracks M            separate (default: one call per track) or interleaved (one two-channel call)
  --token T             connections must carry it as "Authorization: Bearer T" or ?token=T
                        (default SVC_BRIDGE_TOKEN)
  --twilio-auth-token T verify X-Twilio-Signature with the account's auth token
                        (default TWILIO_AUTH_TOKEN)
  --public-url URL      the stream URL as in the TwiML <Stream url> (what Twilio signs; default
                        wss:// + Host + path)
  --max-calls N         sessions at once (default 3)
  --max-connections N   provider connections at once; more are refused with 1013 (default 100)
  --frame-ms MS         send each call's audio in frames of MS ms (default 100: a fifth of the sends
                        of one per message, audio at most 100 ms later; 20 for the lowest latency)
  --when-full P         queue (default) or reject calls beyond --max-calls
  --exit-after N        exit once N calls have ended (--demo: default 1)
  --demo                play a provider: stream the sample call (8 kHz mu-law) as a Twilio
                        (or, with --preset telnyx, Telnyx) media stream into the bridge
  --speed X             demo pace, times real time (default 1)
  --seconds N           demo length (default: the whole call, 38.5 s)
  --config FILE         BatchConfig JSON file, or 'default' (the default)
  --scenario FILE       what the embedded emulator plays (default with --demo: the sample's)
  --base-url URL        models API base (default SVC_BASE_URL, else the embedded emulator)
  --json                NDJSON: per call a call line, its events, a call_end and a state line
${REDIS_HELP}
  -h, --help            this help

Environment: SVC_API_KEY, SVC_BASE_URL, SVC_BRIDGE_TOKEN, TWILIO_AUTH_TOKEN.
Exit status: 0 after --exit-after calls (or Ctrl-C); 1 when it cannot listen or the demo fails.`;


function oneOf<T extends string>(value: string | undefined, name: string, allowed: readonly T[], fallback: T): T {
  if (value === undefined) return fallback;
  if (!(allowed as readonly string[]).includes(value)) throw new InputError('invalid_argument', `--${name} expects ${allowed.join(', ')}, got '${value}'`, { path: name });
  return value as T;
}

const LOOPBACK = new Set(['127.0.0.1', '::1', 'localhost']);

async function run(argv: readonly string[], io: CliIo): Promise<number> {
  const { values } = parseArgs({
    args: [...argv],
    options: {
      port: { type: 'string' },
      host: { type: 'string' },
      path: { type: 'string' },
      preset: { type: 'string' },
      tracks: { type: 'string' },
      token: { type: 'string' },
      'twilio-auth-token': { type: 'string' },
      'public-url': { type: 'string' },
      'max-calls': { type: 'string' },
      'max-connections': { type: 'string' },
      'frame-ms': { type: 'string' },
      'when-full': { type: 'string' },
      'exit-after': { type: 'string' },
      demo: { type: 'boolean' },
      speed: { type: 'string' },
      seconds: { type: 'string' },
      config: { type: 'string' },
      scenario: { type: 'string' },
      'base-url': { type: 'string' },
      json: { type: 'boolean' },
      ...REDIS_OPTION,
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help) {
    io.stdout.write(`${USAGE}\n`);
    return 0;
  }
  const host = values.host ?? '127.0.0.1';
  const port = minFlag(values.port, 'port', 8080, 0);
  const limits = {
    ...(values['max-connections'] !== undefined ? { maxConnections: minFlag(values['max-connections'], 'max-connections', 100, 1) } : {}),
    ...(values['frame-ms'] !== undefined ? { frameMs: minFlag(values['frame-ms'], 'frame-ms', 100, 0) } : {}),
  };
  const preset = oneOf(values.preset, 'preset', ['twilio', 'telnyx', 'auto'] as const, 'auto');
  const trackMode = oneOf(values.tracks, 'tracks', ['separate', 'interleaved'] as const, 'separate');
  const whenFull = oneOf(values['when-full'], 'when-full', ['queue', 'reject'] as const, 'queue');
  const demo = values.demo === true;
  const exitAfter = values['exit-after'] !== undefined ? minFlag(values['exit-after'], 'exit-after', 1, 1) : demo ? 1 : undefined;
  const speed = minFlag(values.speed, 'speed', 1, 0.01, false);
  const seconds = minFlag(values.seconds, 'seconds', 38.6, 0.02, false);
  const twilioAuthToken = values['twilio-auth-token'] ?? io.env['TWILIO_AUTH_TOKEN'];
  // The demo brings a token of its own when none is set, so its bridge is never open.
  const token = values.token ?? io.env['SVC_BRIDGE_TOKEN'] ?? (demo && !twilioAuthToken ? randomBytes(18).toString('base64url') : undefined);
  if (token === undefined && twilioAuthToken === undefined) {
    if (!LOOPBACK.has(host)) throw new InputError('invalid_argument', `listening on ${host} needs --token (or SVC_BRIDGE_TOKEN) or --twilio-auth-token (or TWILIO_AUTH_TOKEN): anyone who can reach it could stream calls into your account`, { path: 'token' });
    io.stderr.write('svc-stream: warning: no --token or --twilio-auth-token: anyone who can reach this port can stream calls into your account\n');
  }
  const publicUrl = values['public-url'];
  const authenticate: MediaStreamAuth = {
    ...(token !== undefined ? { token } : {}),
    ...(twilioAuthToken !== undefined ? { twilio: { authToken: twilioAuthToken, ...(publicUrl !== undefined ? { url: publicUrl } : {}) } } : {}),
  };
  const config = configFlag(values.config);
  const scenarioPath = values.scenario ?? (demo ? samplePath('call.scenario.json') : undefined);
  const scenario = scenarioPath ? readJsonFile(scenarioPath, 'scenario') : undefined;

  const endpoint = await openEndpoint({ baseUrl: values['base-url'] }, io, scenario !== undefined ? { scenario: scenario as never } : {});
  const source = resultSource(endpoint.emulator !== undefined, scenario !== undefined);
  const fleet = await fleetLimits(values.redis, io.env);
  const serverStats = createMediaStreamServerStats();
  const callStats = createAnalyzeCallsStats();
  const out = (line: string): void => void io.stdout.write(`${line}\n`);
  const json = values.json === true;
  if (!json && source !== 'service') out(resultSourceNote(source, scenarioPath));

  try {
    return await showCalls(
      io,
      exitAfter,
      (fail) =>
        analyzeCalls(
          mediaStreamServer({
            host,
            port,
            ...(values.path !== undefined ? { path: values.path } : {}),
            preset,
            trackMode,
            stats: serverStats,
            ...(token !== undefined || twilioAuthToken !== undefined ? { authenticate } : {}),
            onRefused: (reason, req) => io.stderr.write(`svc-stream: refused a connection from ${req.socket.remoteAddress ?? '?'}: ${reason}\n`),
            onMalformed: (reason) => io.stderr.write(`svc-stream: malformed message: ${reason}\n`),
            ...limits,
            onWarning: (w) => io.stderr.write(`svc-stream: ${w.message.replace('Raise maxConnections', 'Raise --max-connections')}\n`),
            onListening: (a) => {
              const path = values.path ?? '/';
              io.stderr.write(`svc-stream: media streams on ws://${a.address}:${a.port}${path}\n`);
              if (!demo) return;
              playMediaStreamDemo({
                url: `ws://127.0.0.1:${a.port}${path}`,
                provider: preset === 'telnyx' ? 'telnyx' : 'twilio',
                token,
                twilioAuthToken,
                // What the bridge verifies by default: wss:// + Host + path.
                signedUrl: publicUrl ?? `wss://127.0.0.1:${a.port}${path}`,
                speed,
                seconds,
              }).catch(fail);
            },
          }),
          {
            apiKey: endpoint.apiKey,
            baseUrl: endpoint.baseUrl,
            config,
            maxConcurrent: minFlag(values['max-calls'], 'max-calls', 3, 1),
            whenFull,
            callStats,
            limiter: fleet.limiter,
          },
        ),
      (call) => {
        const c = call.call;
        const channels = c.format.num_channels > 1 ? `/${c.format.num_channels}` : '';
        return {
          json,
          out,
          started: {
            text: `call ${c.callId ?? c.streamId} (${c.preset}, track ${c.track}, ${c.format.audio_format}/${c.format.sample_rate}${channels}), ${call.status}`,
            json: { type: 'call', id: call.id, stream_id: c.streamId, call_id: c.callId ?? null, preset: c.preset, track: c.track, format: c.format, status: call.status },
          },
          counters: () => {
            const tracks = Object.values(c.stats) as Array<{ received: number; lost: number; late: number; duplicated: number; reordered: number }>;
            const sum = (k: 'received' | 'lost' | 'late' | 'duplicated' | 'reordered') => tracks.reduce((n, t) => n + t[k], 0);
            return { received: sum('received'), lost: sum('lost'), late: sum('late'), duplicated: sum('duplicated'), reordered: sum('reordered') };
          },
          stateSource: source,
        };
      },
    );
  } catch (err) {
    printError(io, err);
    return 1;
  } finally {
    await fleet.close();
    await endpoint.close();
  }
}

export const mediaStreamCommand: Command = {
  name: 'media-stream',
  summary: 'a bridge for Twilio/Telnyx media streams: analyse each call live',
  usage: USAGE,
  run,
};
