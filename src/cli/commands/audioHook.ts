// `svc-stream audiohook`: a server for Genesys Cloud AudioHook that analyses each call as it
// comes (both sides, one channel each), printing what `analyze` prints, per call.
import { randomBytes } from 'node:crypto';
import { InputError } from '../../errors/index.js';
import { samplePath } from '../../samples.js';
import { analyzeCalls } from '../../telephony/analyzeCalls.js';
import type { AudioHookAuth } from '../../telephony/audioHookAuth.js';
import { audioHookServer, createAudioHookServerStats, type AudioHookCall } from '../../telephony/audioHookServer.js';
import type { AudioHookFormat, AudioHookNotice } from '../../telephony/audioHookState.js';
import { customerFirstScenario, playAudioHookDemo, type AudioHookDemoOptions } from '../audioHookDemo.js';
import { callCommandSettings, inCallWorker, runCallCommand, SERVICE_OPTIONS } from '../callCommand.js';
import { defineCommand, type CliIo, type Command } from '../command.js';
import { LOG_FORMAT_OPTION } from '../log.js';
import { checkTcpPort } from '../portCheck.js';
import { option, type OptionValues } from '../options.js';
import { PUBLISH_OPTION } from '../publishFlag.js';
import { REDIS_OPTION } from '../redisFlag.js';
import { BASE_URL_OPTION, CONFIG_OPTION, loadScenario, scenarioOption } from '../sharedOptions.js';
import { clock } from '../terminalView.js';

const FORMATS = ['PCMU', 'L16'] as const;

const OPTIONS = {
  port: option.integer('N', 'port (default 8081; 0 picks a free one, printed on stderr)', { min: 0, max: 65535, fallback: 8081 }),
  host: option.text('H', 'interface (default 127.0.0.1; any other needs --audiohook-api-key)', '127.0.0.1'),
  path: option.text('P', 'accept upgrades on this path only (default: any)'),
  'audiohook-api-key': option.text('K', 'the API key Genesys sends (X-API-KEY) (default AUDIOHOOK_API_KEY)'),
  'audiohook-client-secret': option.text('S', "the integration's client secret, base64: requests must be signed with it\n(default AUDIOHOOK_CLIENT_SECRET)"),
  organization: option.list('ID', 'only this Genesys organization (repeatable; default any)', (raw) => raw),
  'public-url': option.text('URL', 'the URL Genesys is configured with, when a proxy changes the Host or the path\n(what the signature covers; default the request as received)'),
  formats: option.list('F', 'formats taken, PCMU and/or L16 (repeatable; default both)', (raw) => {
    if (!(FORMATS as readonly string[]).includes(raw)) throw new InputError('invalid_argument', `--formats expects PCMU or L16, got '${raw}'`, { path: 'formats' });
    return raw as AudioHookFormat;
  }),
  'max-gap-fill-ms': option.integer('MS', 'fill pauses and discarded audio up to MS with silence, so the session keeps the\ncall\'s time (default 60000; 0: never)', { min: 0 }),
  'max-calls': option.integer('N', 'sessions at once (default 3)', { min: 1, fallback: 3 }),
  'max-connections': option.integer('N', 'AudioHook connections at once; more are answered 503 (default 100)', { min: 1 }),
  'frame-ms': option.integer('MS', "send each call's audio in frames of MS ms (default 100)", { min: 0 }),
  'when-full': option.choice('P', ['queue', 'reject'], 'queue (default) or reject calls beyond --max-calls', 'queue'),
  workers: option.integer('N', 'worker processes sharing the calls (default 1), the connections dealt out\nround-robin; --max-connections and --max-calls hold across them', { min: 1, fallback: 1 }),
  'exit-after': option.integer('N', 'once N calls have ended take no new call, and exit when those running end\n(--demo: default 1)', { min: 1 }),
  ...SERVICE_OPTIONS,
  ...LOG_FORMAT_OPTION,
  demo: option.flag('play Genesys: stream the sample call into the server as a signed AudioHook session\n(the customer on channel 1, the agent on channel 2), with a 2 s hold on the way'),
  speed: option.number('X', 'demo pace, times real time (default 1)', { min: 0.01, fallback: 1 }),
  seconds: option.number('N', 'demo length (default: the whole call, 38.5 s)', { min: 0.2, fallback: 38.6 }),
  ...CONFIG_OPTION,
  ...scenarioOption("what the embedded emulator plays (default with --demo: the sample's;\n`sample`: the shipped call's)"),
  ...BASE_URL_OPTION,
  json: option.flag('NDJSON: per call a call line, its events and AudioHook notices, a call_end and a state line'),
  ...REDIS_OPTION,
  ...PUBLISH_OPTION,
} as const;

const LOOPBACK = new Set(['127.0.0.1', '::1', 'localhost']);

/** A notice of the protocol, in the live view's words. */
function noticeLine(n: AudioHookNotice): string {
  switch (n.type) {
    case 'paused':
      return `paused at ${clock(n.atMs)}`;
    case 'resumed':
    case 'discarded': {
      const what = n.type === 'resumed' ? 'resumed after a pause of' : 'the client discarded';
      return `${what} ${(n.gap.durationMs / 1000).toFixed(1)} s at ${clock(n.gap.atMs)}, ${n.gap.filled ? 'filled with silence' : 'not filled (the session skips it)'}`;
    }
    case 'update':
      return `language ${n.language ?? '(none)'}`;
    case 'client-error':
      return `the client reported error ${n.code}: ${n.message}`;
    case 'ended':
      if (n.end.how === 'closed') return `session closed (${n.end.reason})`;
      if (n.end.how === 'disconnected') return `session disconnected (${n.end.reason}): ${n.end.info}`;
      return 'session lost: the connection closed without a close';
  }
}

async function run({ values }: { readonly values: OptionValues<typeof OPTIONS> }, io: CliIo): Promise<number> {
  const { host, port, speed, seconds } = values;
  const demo = values.demo;
  if (demo && values.workers > 1) throw new InputError('invalid_argument', '--demo plays one call into one process: leave out --workers', { path: 'workers' });
  const exitAfter = values['exit-after'] ?? (demo ? 1 : undefined);
  // The demo brings a key and a secret of its own when none is set, so its server is never open.
  let apiKey = values['audiohook-api-key'] ?? io.env['AUDIOHOOK_API_KEY'];
  let clientSecret = values['audiohook-client-secret'] ?? io.env['AUDIOHOOK_CLIENT_SECRET'];
  if (demo && apiKey === undefined) {
    apiKey = randomBytes(18).toString('base64url');
    clientSecret ??= randomBytes(32).toString('base64');
  }
  if (clientSecret !== undefined && apiKey === undefined) throw new InputError('invalid_argument', '--audiohook-client-secret needs --audiohook-api-key (or AUDIOHOOK_API_KEY): the secret is the key\'s', { path: 'audiohook-api-key' });
  if (apiKey === undefined) {
    if (!LOOPBACK.has(host)) throw new InputError('invalid_argument', `listening on ${host} needs --audiohook-api-key (or AUDIOHOOK_API_KEY), and its --audiohook-client-secret: anyone who can reach it could stream calls into your account`, { path: 'audiohook-api-key' });
  }
  const authenticate: AudioHookAuth | undefined =
    apiKey === undefined
      ? undefined
      : {
          apiKeys: { [apiKey]: clientSecret ?? null },
          ...(values.organization.length > 0 ? { organizationIds: values.organization } : {}),
          ...(values['public-url'] !== undefined ? { publicUrl: values['public-url'] } : {}),
        };
  const scenarioPath = values.scenario ?? (demo ? samplePath('call.scenario.json') : undefined);
  const loaded = scenarioPath ? await loadScenario(scenarioPath) : undefined;
  // The demo's call has the customer on channel 1: the sample's speakers follow (see customerFirstScenario).
  const scenario = demo && values.scenario === undefined ? customerFirstScenario(loaded) : loaded;
  const turns = demo ? ((loaded as { transcript?: AudioHookDemoOptions['turns'] } | undefined)?.transcript ?? []) : [];
  // Before anything starts (no emulator, no worker): the port free.
  if (!inCallWorker()) await checkTcpPort('port', host, port);
  const serverStats = createAudioHookServerStats();
  const settings = callCommandSettings(values, {
    exitAfter,
    scenario,
    ownHttpPort: true,
    port: { flag: 'port', port, host },
    notices: apiKey === undefined ? ['warning: no --audiohook-api-key: anyone who can reach this port can stream calls into your account'] : [],
    totals: { source: 'audioHookServer', keys: ['connections', 'closed', 'disconnected', 'lost', 'unauthorized', 'overCapacity', 'refusedDraining'], stats: serverStats },
  });
  return runCallCommand<AudioHookCall>(
    io,
    settings,
    (run) =>
      analyzeCalls(
        audioHookServer({
          ...(run.worker ? { worker: run.worker } : {}),
          lifecycle: run.lifecycle,
          ...(run.onRequest ? { onRequest: run.onRequest } : {}),
          stats: serverStats,
          host,
          port,
          ...(values.path !== undefined ? { path: values.path } : {}),
          ...(authenticate ? { authenticate } : {}),
          ...(values.formats.length > 0 ? { formats: values.formats } : {}),
          ...(values['max-gap-fill-ms'] !== undefined ? { maxGapFillMs: values['max-gap-fill-ms'] } : {}),
          ...(values['max-connections'] !== undefined ? { maxConnections: values['max-connections'] } : {}),
          ...(values['frame-ms'] !== undefined ? { frameMs: values['frame-ms'] } : {}),
          onRefused: (failure, req) => io.stderr.write(`svc-stream: refused a connection from ${req.socket.remoteAddress ?? '?'}: ${failure.reason} (${failure.detail})\n`),
          onNotice: (notice, sessionId, call) => {
            if (call === undefined) {
              // A session that never became a call (a probe, media not taken, no open): said on stderr.
              if (notice.type === 'ended') io.stderr.write(`svc-stream: AudioHook session ${sessionId ?? '(no id)'} ${noticeLine(notice)}\n`);
              return;
            }
            run.out(run.json ? JSON.stringify({ type: 'audiohook', id: call.id, notice }) : `${call.id} ${noticeLine(notice)}`);
          },
          // Once per process family: a worker hands it to the primary.
          onWarning: (w) => run.warn(w.code, w.message.replace('Raise maxConnections', 'Raise --max-connections')),
          onListening: (a) => {
            const path = values.path ?? '/';
            io.stderr.write(`svc-stream: AudioHook on ws://${a.address}:${a.port}${path}\n`);
            if (!demo) return;
            playAudioHookDemo({ url: `ws://127.0.0.1:${a.port}${path}`, apiKey: apiKey!, clientSecret, speed, seconds, pauseSeconds: 2, turns }).catch(run.fail);
          },
        }),
        run.analyze<AudioHookCall>(),
      ),
    (call) => {
      const c = call.call;
      const p = c.participant;
      return {
        started: {
          text: `call ${c.conversationId} from ${p.ani || '?'}${p.aniName ? ` (${p.aniName})` : ''} to ${p.dnis || '?'}, ${c.media.format} ${c.channels.join('+')} as ${c.format.audio_format}/${c.format.sample_rate}/${c.format.num_channels}, ${call.status}`,
          json: {
            type: 'call',
            id: call.id,
            conversation_id: c.conversationId,
            organization_id: c.organizationId,
            participant: c.participant,
            language: c.language ?? null,
            media: c.media,
            channels: c.channels,
            format: c.format,
            status: call.status,
          },
        },
        counters: () => ({ frames: c.stats.frames, bytes: c.stats.bytes, paused_ms: c.stats.pausedMs, discarded_ms: c.stats.discardedMs, filled_ms: c.stats.filledMs }),
      };
    },
  );
}

export const audioHookCommand: Command = defineCommand({
  name: 'audiohook',
  summary: 'a server for Genesys Cloud AudioHook: analyse each call live, both sides',
  synopsis: 'svc-stream audiohook [options]',
  description: `A Genesys Cloud AudioHook server (the AudioHook Monitor integration's Connection URI): each
call's customer (external) and agent (internal) sides are analysed live as the two channels of
one session, one line per result prefixed with the AudioHook session's id (or NDJSON with
--json). Requests are authenticated by X-API-KEY and, with a client secret, the signature
Genesys adds (RFC 9421); pauses and discarded audio are filled with silence and said.`,
  options: OPTIONS,
  footer: `Environment: SVC_API_KEY, SVC_BASE_URL, AUDIOHOOK_API_KEY, AUDIOHOOK_CLIENT_SECRET.
Exit status: 0 when every call it took ended done (after --exit-after calls, or a signal: the
first drains, new connections answered 503 with Retry-After while the sessions open run to
their close, a second ends them with disconnect); 1 when one did not (failed, ended shutdown,
lost with a worker), it cannot listen or the demo fails; 2 for a usage mistake or a port in use.`,
  run,
});
