// `svc-stream media-stream`: a bridge for Twilio/Telnyx media streams that analyses each call
// as it comes, printing what `analyze` prints, per call.
import { randomBytes } from 'node:crypto';
import { InputError } from '../../errors/index.js';
import { samplePath } from '../../samples.js';
import { analyzeCalls } from '../../telephony/analyzeCalls.js';
import type { MediaStreamAuth } from '../../telephony/mediaStreamAuth.js';
import { createMediaStreamServerStats, mediaStreamServer, type MediaStreamCall } from '../../telephony/mediaStreamServer.js';
import { callCommandSettings, inCallWorker, runCallCommand, SERVICE_OPTIONS } from '../callCommand.js';
import { defineCommand, type CliIo, type Command } from '../command.js';
import { LOG_FORMAT_OPTION } from '../log.js';
import { checkTcpPort } from '../portCheck.js';
import { playMediaStreamDemo } from '../mediaStreamDemo.js';
import { option, type OptionValues } from '../options.js';
import { PUBLISH_OPTION } from '../publishFlag.js';
import { REDIS_OPTION } from '../redisFlag.js';
import { BASE_URL_OPTION, CONFIG_OPTION, loadScenario, scenarioOption } from '../sharedOptions.js';

const OPTIONS = {
  port: option.integer('N', 'port (default 8080; 0 picks a free one, printed on stderr)', { min: 0, max: 65535, fallback: 8080 }),
  host: option.text('H', 'interface (default 127.0.0.1; any other needs --token or --twilio-auth-token)', '127.0.0.1'),
  path: option.text('P', 'accept upgrades on this path only (default: any)'),
  preset: option.choice('P', ['twilio', 'telnyx', 'auto'], 'twilio, telnyx or auto (default auto: told by each start message)', 'auto'),
  tracks: option.choice('M', ['separate', 'interleaved'], 'separate (default: one call per track) or interleaved (one two-channel call)', 'separate'),
  token: option.text('T', 'connections must carry it as "Authorization: Bearer T" or ?token=T\n(default SVC_BRIDGE_TOKEN)'),
  'twilio-auth-token': option.text('T', "verify X-Twilio-Signature with the account's auth token\n(default TWILIO_AUTH_TOKEN)"),
  'public-url': option.text('URL', 'the stream URL as in the TwiML <Stream url> (what Twilio signs; default\nwss:// + Host + path)'),
  'max-calls': option.integer('N', 'sessions at once (default 3)', { min: 1, fallback: 3 }),
  'max-connections': option.integer('N', 'provider connections at once; more are refused with 1013 (default 100)', { min: 1 }),
  'frame-ms': option.integer('MS', "send each call's audio in frames of MS ms (default 100: a fifth of the sends\nof one per message, audio at most 100 ms later; 20 for the lowest latency)", { min: 0 }),
  'when-full': option.choice('P', ['queue', 'reject'], 'queue (default) or reject calls beyond --max-calls', 'queue'),
  workers: option.integer('N', 'worker processes sharing the calls (default 1), the connections dealt out\nround-robin; --max-connections and --max-calls hold across them', { min: 1, fallback: 1 }),
  'exit-after': option.integer('N', 'once N calls have ended take no new call, and exit when those running end\n(--demo: default 1)', { min: 1 }),
  ...SERVICE_OPTIONS,
  ...LOG_FORMAT_OPTION,
  demo: option.flag('play a provider: stream the sample call (8 kHz mu-law) as a Twilio\n(or, with --preset telnyx, Telnyx) media stream into the bridge'),
  speed: option.number('X', 'demo pace, times real time (default 1)', { min: 0.01, fallback: 1 }),
  seconds: option.number('N', 'demo length (default: the whole call, 38.5 s)', { min: 0.02, fallback: 38.6 }),
  ...CONFIG_OPTION,
  ...scenarioOption("what the embedded emulator plays (default with --demo: the sample's;\n`sample`: the shipped call's)"),
  ...BASE_URL_OPTION,
  json: option.flag('NDJSON: per call a call line, its events, a call_end and a state line'),
  ...REDIS_OPTION,
  ...PUBLISH_OPTION,
} as const;

const LOOPBACK = new Set(['127.0.0.1', '::1', 'localhost']);

async function run({ values }: { readonly values: OptionValues<typeof OPTIONS> }, io: CliIo): Promise<number> {
  const { host, port, preset, speed, seconds } = values;
  const trackMode = values.tracks;
  const limits = {
    ...(values['max-connections'] !== undefined ? { maxConnections: values['max-connections'] } : {}),
    ...(values['frame-ms'] !== undefined ? { frameMs: values['frame-ms'] } : {}),
  };
  const demo = values.demo;
  if (demo && values.workers > 1) throw new InputError('invalid_argument', '--demo plays one call into one process: leave out --workers', { path: 'workers' });
  const exitAfter = values['exit-after'] ?? (demo ? 1 : undefined);
  const twilioAuthToken = values['twilio-auth-token'] ?? io.env['TWILIO_AUTH_TOKEN'];
  // The demo brings a token of its own when none is set, so its bridge is never open.
  const token = values.token ?? io.env['SVC_BRIDGE_TOKEN'] ?? (demo && !twilioAuthToken ? randomBytes(18).toString('base64url') : undefined);
  if (token === undefined && twilioAuthToken === undefined) {
    if (!LOOPBACK.has(host)) throw new InputError('invalid_argument', `listening on ${host} needs --token (or SVC_BRIDGE_TOKEN) or --twilio-auth-token (or TWILIO_AUTH_TOKEN): anyone who can reach it could stream calls into your account`, { path: 'token' });
  }
  // Before anything starts (no emulator, no worker): the port free.
  if (!inCallWorker()) await checkTcpPort('port', host, port);
  const publicUrl = values['public-url'];
  const authenticate: MediaStreamAuth = {
    ...(token !== undefined ? { token } : {}),
    ...(twilioAuthToken !== undefined ? { twilio: { authToken: twilioAuthToken, ...(publicUrl !== undefined ? { url: publicUrl } : {}) } } : {}),
  };
  const scenarioPath = values.scenario ?? (demo ? samplePath('call.scenario.json') : undefined);
  const scenario = scenarioPath ? await loadScenario(scenarioPath) : undefined;
  const serverStats = createMediaStreamServerStats();
  const settings = callCommandSettings(values, {
    exitAfter,
    scenario,
    ownHttpPort: true,
    port: { flag: 'port', port, host },
    notices: token === undefined && twilioAuthToken === undefined ? ['warning: no --token or --twilio-auth-token: anyone who can reach this port can stream calls into your account'] : [],
    totals: { source: 'mediaStreamServer', keys: ['connections', 'messages', 'malformed', 'overCapacity', 'refusedDraining'], stats: serverStats },
  });
  return runCallCommand<MediaStreamCall>(
    io,
    settings,
    (run) =>
      analyzeCalls(
        mediaStreamServer({
          ...(run.worker ? { worker: run.worker } : {}),
          lifecycle: run.lifecycle,
          ...(run.onRequest ? { onRequest: run.onRequest } : {}),
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
          // Once per process family: a worker hands it to the primary.
          onWarning: (w) => run.warn(w.code, w.message.replace('Raise maxConnections', 'Raise --max-connections')),
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
            }).catch(run.fail);
          },
        }),
        run.analyze<MediaStreamCall>(),
      ),
    (call) => {
      const c = call.call;
      const channels = c.format.num_channels > 1 ? `/${c.format.num_channels}` : '';
      return {
        started: {
          text: `call ${c.callId ?? c.streamId} (${c.preset}, track ${c.track}, ${c.format.audio_format}/${c.format.sample_rate}${channels}), ${call.status}`,
          json: { type: 'call', id: call.id, stream_id: c.streamId, call_id: c.callId ?? null, preset: c.preset, track: c.track, format: c.format, status: call.status },
        },
        counters: () => {
          const tracks = Object.values(c.stats) as Array<{ received: number; lost: number; late: number; duplicated: number; reordered: number }>;
          const sum = (k: 'received' | 'lost' | 'late' | 'duplicated' | 'reordered') => tracks.reduce((n, t) => n + t[k], 0);
          return { received: sum('received'), lost: sum('lost'), late: sum('late'), duplicated: sum('duplicated'), reordered: sum('reordered') };
        },
      };
    },
  );
}

export const mediaStreamCommand: Command = defineCommand({
  name: 'media-stream',
  summary: 'a bridge for Twilio/Telnyx media streams: analyse each call live',
  synopsis: 'svc-stream media-stream [options]',
  description: `A WebSocket bridge for cloud-telephony media streams (Twilio Media Streams, Telnyx Media
Streaming): point the provider's stream URL at it, and each call is analysed live in its own
session, one line per result prefixed with the call's id (or NDJSON with --json).`,
  options: OPTIONS,
  footer: `Environment: SVC_API_KEY, SVC_BASE_URL, SVC_BRIDGE_TOKEN, TWILIO_AUTH_TOKEN.
Exit status: 0 when every call it took ended done (after --exit-after calls, or a signal: the
first drains, a second ends the calls in flight); 1 when one did not (failed, ended shutdown,
lost with a worker), or the demo failed; 2 for a usage mistake or a port in use.`,
  run,
});
