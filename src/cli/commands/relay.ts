// `svc-stream relay FILE...`: one live session per file, their raw events relayed to browser
// pages (server-sent events) from an allow-list of origins with a token; the API key stays here.
import { randomBytes } from 'node:crypto';
import { basename, extname } from 'node:path';
import { AUDIO_OPTIONS, checkAudioInput, fileAudio, streamTranscodes } from '../audioFlags.js';
import { option, type OptionValues } from '../options.js';
import { BASE_URL_OPTION, CONFIG_OPTION, loadScenario, scenarioOption } from '../sharedOptions.js';
import { InputError } from '../../errors/index.js';
import { createRelay } from '../../relay/server.js';
import type { RelaySessionCounters } from '../../relay/relaySession.js';
import { errorSummary, type RelayEnd } from '../../relay/protocol.js';
import { commandPublisher, fromOption, PUBLISH_OPTION } from '../publishFlag.js';
import { conversationSession } from '../../session/conversation.js';
import { defineCommand, type CliIo, type Command } from '../command.js';
import { LOG_FORMAT_OPTION } from '../log.js';
import { checkFleetPackages, checkMetricsPackage } from '../optionalFlags.js';
import { checkTcpPort } from '../portCheck.js';
import { watchRedis } from '../redisHealth.js';
import { DRAIN_OPTION, METRICS_OPTIONS, startCommandService } from '../service.js';
import type { ServiceMetric } from '../../service/metric.js';
import { publisherPart } from '../publishMetrics.js';
import { createSessionStats } from '../../session/stats.js';
import { openEndpoint } from '../endpoint.js';
import { scenarioFor } from './analyze.js';

const OPTIONS = {
  port: option.integer('N', 'port (default 0: a free one)', { min: 0, max: 65535, fallback: 0 }),
  host: option.text('ADDR', 'address to listen on (default 127.0.0.1)', '127.0.0.1'),
  origin: option.list('URL', 'an origin allowed to read (repeat; e.g. http://localhost:5173)'),
  history: option.integer('N', 'events kept per session for pages that resume or join late (default 10000)', { min: 1, fallback: 10_000 }),
  ...AUDIO_OPTIONS,
  ...CONFIG_OPTION,
  speed: option.number('X', 'send the audio at X times live pace (default 1: real time)', { above: 0, fallback: 1 }),
  'exit-when-done': option.flag('exit once every session ended (pages connected then are sent the end)'),
  ...scenarioOption("what the embedded emulator plays (default: the first FILE's stem +\n.scenario.json; `sample`: the shipped call's)"),
  ...BASE_URL_OPTION,
  ...PUBLISH_OPTION,
  ...fromOption('serve every session published to this Redis (by any process of the fleet)\ninstead of only its own; FILE sessions are then published there'),
  ...DRAIN_OPTION,
  ...METRICS_OPTIONS,
  ...LOG_FORMAT_OPTION,
} as const;

async function run({ values, positionals }: { readonly values: OptionValues<typeof OPTIONS>; readonly positionals: string[] }, io: CliIo): Promise<number> {
  const from = values.from;
  if (positionals.length === 0 && from === undefined) throw new InputError('invalid_argument', 'relay needs at least one FILE, or --from URL');
  if (positionals.length === 0 && values['exit-when-done']) throw new InputError('invalid_argument', '--exit-when-done needs a FILE to wait for', { path: 'exit-when-done' });
  const ids = new Set<string>();
  for (const file of positionals) {
    const id = basename(file, extname(file));
    if (ids.has(id)) throw new InputError('invalid_argument', `two FILEs have the stem ${id}: session ids must differ`, { path: 'FILE' });
    ids.add(id);
  }
  // Before anything starts (no emulator, no listening): every FILE audio, the ports free, the flags' packages there.
  for (const file of positionals) await checkAudioInput(file, values, streamTranscodes(file, values, values.speed !== undefined));
  await checkTcpPort('port', values.host, values.port);
  await checkTcpPort('metrics-port', values['metrics-host'], values['metrics-port']);
  await checkMetricsPackage(values['metrics-port']);
  await checkFleetPackages({ publish: values.publish, from }, io.env);
  const { port, speed, history } = values;
  const config = values.config ?? 'default';
  const scenarioPath = values.scenario ?? scenarioFor(positionals[0]);
  const scenario = scenarioPath ? await loadScenario(scenarioPath) : undefined;
  let token = io.env['SVC_RELAY_TOKEN'];
  const madeToken = token === undefined || token === '';
  if (madeToken) token = randomBytes(24).toString('base64url');
  // Checked before the emulator starts: a bad origin or id throws here.
  const relay = createRelay({
    token: token!,
    origins: values.origin,
    historyEvents: history,
    ...(from !== undefined ? { from, onRedisError: (e) => io.stderr.write(`svc-stream: relay: ${e.message.split('\n')[0]}; reconnecting (pages get 503 and retry)\n`) } : {}),
  });
  // Served from Redis, the FILE sessions are published there.
  const published = await commandPublisher(values.publish ?? (positionals.length > 0 ? from : undefined), io);

  const service = await startCommandService(io, {
    drainTimeoutMs: values['drain-timeout'],
    metricsPort: values['metrics-port'],
    metricsHost: values['metrics-host'],
    ownHttpPort: true,
    extra: () => relayMetrics(relay),
    dependencies: from !== undefined ? [await watchRedis(from, '--from')] : [],
    drainLine: `draining: /readyz false; the sessions running end within ${values['drain-timeout']} ms (a second signal ends them now)`,
  });
  if (published.publisher) service.lifecycle.attach(publisherPart(published.publisher));
  const endpoint = await openEndpoint({ baseUrl: values['base-url'] }, io, scenario !== undefined ? { scenario: scenario as never } : {});
  const ends: Promise<RelayEnd>[] = [];
  /** Each FILE session's stop, while it runs. */
  const running = new Set<() => void>();
  // The FILE sessions are what is in flight: a drain lets them end, a second signal ends them now.
  const sessions = service.lifecycle.attach({
    get inFlight() {
      return running.size;
    },
    stopAccepting: () => undefined,
    endCalls: () => {
      for (const stop of [...running]) stop();
    },
  });
  try {
    if (endpoint.emulator && scenarioPath) io.stderr.write(`svc-stream: the emulator plays ${scenarioPath}\n`);
    const { url } = await relay.listen({ port, host: values.host, onRequest: service.onRequest });
    service.lifecycle.ready();
    io.stdout.write(`svc-stream relay: ${url}\n`);
    if (madeToken) io.stdout.write(`svc-stream relay token: ${token} (set SVC_RELAY_TOKEN to choose one)\n`);
    for (const file of positionals) {
      const id = basename(file, extname(file));
      const stats = createSessionStats();
      const session$ = published.session(id, basename(file), conversationSession(fileAudio(file, values, speed), { apiKey: endpoint.apiKey, baseUrl: endpoint.baseUrl, config, stats }), stats.state$);
      let ended: Promise<RelayEnd>;
      let stop: () => void;
      if (from !== undefined) {
        ended = new Promise((resolve) => {
          const sub = session$.subscribe({
            error: (err: unknown) => resolve({ status: 'failed', error: errorSummary(err) }),
            complete: () => resolve({ status: 'done' }),
          });
          stop = () => {
            sub.unsubscribe();
            resolve({ status: 'closed' });
          };
        });
      } else {
        const session = relay.addSession({ id, title: basename(file) });
        session.follow(stats.state$);
        session.feed(session$);
        ended = session.ended;
        stop = () => session.close();
      }
      running.add(stop!);
      ends.push(
        ended.then((end) => {
          running.delete(stop);
          sessions.changed();
          const what = end.status === 'failed' ? `failed: ${end.error?.code}: ${end.error?.message}` : end.status;
          io.stderr.write(`svc-stream: session ${id} ${what}\n`);
          return end;
        }),
      );
    }
    if (from !== undefined) io.stderr.write(`svc-stream: serving every session published to ${published.publisher?.target ?? from.replace(/\/\/[^@/]*@/, '//***@')}\n`);
    if (positionals.length > 0) io.stderr.write(`svc-stream: relaying ${positionals.length} session(s) at ${speed}x live pace; ${values['exit-when-done'] ? 'exits when done' : 'Ctrl-C to stop'}\n`);
    await Promise.race([service.stopped, values['exit-when-done'] ? Promise.all(ends) : new Promise<never>(() => undefined)]);
  } finally {
    for (const stop of [...running]) stop();
    sessions.detach();
    await relay.close();
    await published.close();
    await endpoint.close();
    await service.close();
  }
  const settled = await Promise.all(ends);
  // 0 only when every session ended done (or none ran); a failure or a session cut short is 1.
  return settled.some((e) => e.status !== 'done') ? 1 : 0;
}

/** The relay's families: pages connected, what it refused and why, the sessions it holds. */
function relayMetrics(relay: ReturnType<typeof createRelay>): ServiceMetric[] {
  const s = relay.stats;
  return [
    { name: 'svc_stream_relay_pages', help: 'Pages reading an event stream now.', type: 'gauge', samples: () => [{ value: s.streams }] },
    {
      name: 'svc_stream_relay_refused_total',
      help: 'Page requests refused, by reason: origin (403), token (401), busy (503, every stream slot taken).',
      type: 'counter',
      labels: ['reason'],
      samples: () => [
        { labels: { reason: 'origin' }, value: s.refusedOrigin },
        { labels: { reason: 'token' }, value: s.refusedToken },
        { labels: { reason: 'busy' }, value: s.refusedBusy },
      ],
    },
    { name: 'svc_stream_relay_sessions', help: 'Sessions the relay serves now (live, or ended and kept).', type: 'gauge', samples: () => [{ value: relay.sessions().length }] },
    // How far pages lag, as the relay knows it: a page that fell behind the history skips ahead (a gap), one whose socket stays full is cut off.
    // Over the sessions held now (an ended session is forgotten after a while): levels, not counters.
    { name: 'svc_stream_relay_page_gaps', help: 'Times a page lagged past the history kept and skipped ahead (a gap message), over the FILE sessions the relay holds now.', type: 'gauge', samples: () => [{ value: sum((c) => c.gaps) }] },
    { name: 'svc_stream_relay_pages_dropped', help: 'Pages cut off because their socket stayed full (a page lagging for good), over the FILE sessions the relay holds now.', type: 'gauge', samples: () => [{ value: sum((c) => c.clientsDropped) }] },
  ];
  function sum(read: (c: RelaySessionCounters) => number): number {
    let n = 0;
    for (const info of relay.sessions()) {
      const counters = relay.session(info.id)?.counters;
      if (counters) n += read(counters);
    }
    return n;
  }
}

export const relayCommand: Command = defineCommand({
  name: 'relay',
  summary: "relay live sessions' events to browser pages (SSE, origins, token)",
  synopsis: 'svc-stream relay FILE... [options]',
  description: `Run one conversation-analysis session per FILE and relay each session's raw events to
browser pages over server-sent events, so a web page can fold them with the library's
browser entry without ever holding the API key. Each session's id is its file's stem
(call.wav -> call). With --from redis://…, serve every session the fleet publishes there
(svc-stream … --publish), FILE or not: any relay of the fleet resumes a page from its
Last-Event-ID (docs/fleet.md). Pages read:

  GET /sessions                  the sessions, as JSON
  GET /sessions/ID/events        text/event-stream: every event with its id, the status,
                                 the end; resumes from Last-Event-ID

Every request needs the relay token (Authorization: Bearer TOKEN, ?token=TOKEN, or the
svc_relay_token cookie) and, from a browser, an Origin on the --origin list.`,
  options: OPTIONS,
  footer: `Environment: SVC_RELAY_TOKEN (the relay's token; without it one is made and printed once),
SVC_API_KEY, SVC_BASE_URL, SVC_PUBLISH_URL. Prints the relay's URL on stdout. /healthz, /readyz and
/metrics on its port (or --metrics-port). SIGTERM (or a first Ctrl-C) drains: /readyz false, the FILE
sessions running end (within --drain-timeout), then it exits; a second signal ends them at once.
Exit status: 0 when every session ended done (or none ran); 1 when one failed or was cut short.`,
  positionals: true,
  run,
});

export const relayCommands: readonly Command[] = [relayCommand];
