// `svc-stream dashboard [FILE]`: a live view of a session in the browser.
import { existsSync } from 'node:fs';
import { basename, extname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { AUDIO_OPTIONS, checkAudioInput, fileAudio, streamTranscodes } from '../audioFlags.js';
import { option, type OptionValues } from '../options.js';
import { BASE_URL_OPTION, loadScenario, readConfig, scenarioOption } from '../sharedOptions.js';
import { openBrowser } from '../../dashboard/openBrowser.js';
import { startDashboard } from '../../dashboard/server.js';
import { audioMetaOf } from '../../audio/meta.js';
import type { DashboardView } from '../../dashboard/view.js';
import { InputError } from '../../errors/index.js';
import { conversationSession } from '../../session/conversation.js';
import { createSessionStats } from '../../session/stats.js';
import { defineCommand, type CliIo, type Command } from '../command.js';
import { LOG_FORMAT_OPTION } from '../log.js';
import { checkFleetPackages, checkMetricsPackage } from '../optionalFlags.js';
import { checkTcpPort } from '../portCheck.js';
import { publisherPart } from '../publishMetrics.js';
import { watchRedis } from '../redisHealth.js';
import { METRICS_OPTIONS, startCommandService } from '../service.js';
import { sessionPart } from '../../telephony/callMetrics.js';
import { openEndpoint } from '../endpoint.js';
import { fleetLimits, REDIS_OPTION } from '../redisFlag.js';
import { commandPublisher, fromOption, PUBLISH_OPTION } from '../publishFlag.js';
import { sessionIdOf } from '../../schema/sessionId.js';
import { reconnectLines, scenarioFor } from './analyze.js';

const OPTIONS = {
  port: option.integer('N', 'port on 127.0.0.1 (default 0: a free port)', { min: 0, max: 65535, fallback: 0 }),
  ...AUDIO_OPTIONS,
  config: option.custom('FILE', "BatchConfig JSON file, or 'default' (the default when FILE is given)", (raw, flag) => readConfig(raw, flag)),
  speed: option.number('X', 'send the audio at X times live pace (default 1: real time)', { above: 0, fallback: 1 }),
  'no-open': option.flag('do not open the browser; just print the URL'),
  'start-now': option.flag('start the session at once instead of on the first page load'),
  'exit-when-done': option.flag('exit once the session ended (pages connected then are sent its end\nfirst), whether a page is connected or not; otherwise run until Ctrl-C'),
  ...scenarioOption("what the embedded emulator plays (default: FILE's stem + .scenario.json;\n`sample`: the shipped call's)"),
  ...BASE_URL_OPTION,
  ...REDIS_OPTION,
  ...PUBLISH_OPTION,
  ...fromOption("the supervisor's page instead: every call published to this Redis (by any\nprocess of the fleet), each one's live view a click away; no FILE"),
  ...METRICS_OPTIONS,
  ...LOG_FORMAT_OPTION,
} as const;

/** A file shipped in the package's samples/ folder, from src/cli/commands (tsx) or dist/cli/commands (built). */
function packagedSample(name: string): string | undefined {
  const path = fileURLToPath(new URL(`../../../samples/${name}`, import.meta.url));
  return existsSync(path) ? path : undefined;
}

/** `dashboard --from URL`: the supervisor's page of the fleet, until Ctrl-C. */
async function runFleet(from: string, values: OptionValues<typeof OPTIONS>, io: CliIo): Promise<number> {
  if (values['exit-when-done'] || values['start-now']) throw new InputError('invalid_argument', '--from shows the fleet until Ctrl-C: --exit-when-done and --start-now are for one FILE', { path: 'from' });
  await checkTcpPort('port', '127.0.0.1', values.port);
  await checkTcpPort('metrics-port', values['metrics-host'], values['metrics-port']);
  await checkMetricsPackage(values['metrics-port']);
  await checkFleetPackages({ from }, io.env);
  const service = await startCommandService(io, { drainTimeoutMs: 0, metricsPort: values['metrics-port'], metricsHost: values['metrics-host'], ownHttpPort: true, dependencies: [await watchRedis(from, '--from')] });
  const { startFleetDashboard } = await import('../../dashboard/fleetServer.js');
  const dashboard = await startFleetDashboard({ from, port: values.port, onRequest: service.onRequest, onRedisError: (e) => io.stderr.write(`svc-stream: dashboard: ${e.message.split('\n')[0]}; reconnecting\n`) }).catch(async (e: unknown) => {
    await service.close();
    throw e;
  });
  service.lifecycle.ready();
  try {
    io.stdout.write(`svc-stream dashboard: ${dashboard.url}\n`);
    io.stderr.write(`svc-stream: every call published to ${from.replace(/\/\/[^@/]*@/, '//***@')}; Ctrl-C to stop\n`);
    if (!values['no-open'] && !(await openBrowser(dashboard.url, process.platform, io.env))) {
      io.stderr.write(`svc-stream: no browser could be opened from here; open ${dashboard.url} in yours\n`);
    }
    await service.stopped;
  } finally {
    await dashboard.close();
    await service.close();
  }
  return 0;
}

async function run({ values, positionals }: { readonly values: OptionValues<typeof OPTIONS>; readonly positionals: string[] }, io: CliIo): Promise<number> {
  if (values.from !== undefined) {
    if (positionals.length > 0) throw new InputError('invalid_argument', 'dashboard --from shows the calls published to Redis: no FILE (publish one with --publish from another command)', { path: 'from' });
    return runFleet(values.from, values, io);
  }
  if (positionals.length > 1) throw new InputError('invalid_argument', `dashboard takes one FILE, got ${positionals.length}`);
  const file = positionals[0] ?? packagedSample('call.wav');
  if (file === undefined) throw new InputError('invalid_argument', 'no FILE given and the sample call is not installed');
  // Before anything starts (no emulator, no page): the file is audio, the ports free, the flags' packages there.
  await checkAudioInput(file, values, streamTranscodes(file, values, true));
  await checkTcpPort('port', '127.0.0.1', values.port);
  await checkTcpPort('metrics-port', values['metrics-host'], values['metrics-port']);
  await checkMetricsPackage(values['metrics-port']);
  await checkFleetPackages({ redis: values.redis, publish: values.publish }, io.env);
  const { port, speed } = values;
  const config = values.config ?? (positionals[0] === undefined ? readConfig(packagedSample('call.config.json')) : undefined) ?? 'default';
  const scenarioPath = values.scenario ?? scenarioFor(file);
  const scenario = scenarioPath ? await loadScenario(scenarioPath) : undefined;

  const redisUrl = values.redis ?? io.env['SVC_REDIS_URL'];
  // Nothing to drain: the one session is the viewer's; a signal stops the dashboard.
  const service = await startCommandService(io, { drainTimeoutMs: 0, metricsPort: values['metrics-port'], metricsHost: values['metrics-host'], ownHttpPort: true, dependencies: redisUrl ? [await watchRedis(redisUrl, '--redis')] : [] });
  const endpoint = await openEndpoint({ baseUrl: values['base-url'] }, io, scenario !== undefined ? { scenario: scenario as never } : {});
  let final: DashboardView | undefined;
  const fleet = await fleetLimits(values.redis, io.env);
  const published = await commandPublisher(values.publish, io);
  try {
    if (endpoint.emulator && scenarioPath) io.stderr.write(`svc-stream: the emulator plays ${scenarioPath}\n`);
    const stats = createSessionStats();
    service.lifecycle.attach(sessionPart(stats));
    if (published.publisher) service.lifecycle.attach(publisherPart(published.publisher));
    // The page follows the session's life cycle through its stats (`reconnecting…` included);
    // the terminal gets a line per reconnect.
    const reconnects = reconnectLines(stats, io);
    const audio = fileAudio(file, values, speed);
    const dashboard = await startDashboard({
      events$: published.session(
        sessionIdOf(basename(file, extname(file))),
        basename(file),
        conversationSession(audio, {
          apiKey: endpoint.apiKey,
          baseUrl: endpoint.baseUrl,
          config,
          stats,
          limiter: fleet.limiter,
        }),
        stats.state$,
      ),
      stats,
      format: audioMetaOf(audio)?.format,
      title: basename(file),
      port,
      start: values['start-now'] ? 'now' : 'load',
      onRequest: service.onRequest,
    });
    service.lifecycle.ready();
    try {
      io.stdout.write(`svc-stream dashboard: ${dashboard.url}\n`);
      io.stderr.write(
        `svc-stream: ${values['start-now'] ? 'the session has started' : 'the session starts when the page loads'} (${speed}x live pace); ${values['exit-when-done'] ? 'exits when done' : 'Ctrl-C to stop'}\n`,
      );
      if (!values['no-open'] && !(await openBrowser(dashboard.url, process.platform, io.env))) {
        io.stderr.write(`svc-stream: no browser could be opened from here; open ${dashboard.url} in yours\n`);
      }
      void dashboard.session.ended.then((view) => {
        final = view;
        if (view.status === 'failed') io.stderr.write(`svc-stream: ${view.error?.code ?? 'error'}: ${view.error?.message ?? 'session failed'}\n`);
        else if (view.status === 'done') io.stderr.write(`svc-stream: session done (${((view.duration_ms ?? 0) / 1000).toFixed(1)} s of audio)\n`);
      });
      await Promise.race([service.stopped, values['exit-when-done'] ? dashboard.finalServed : new Promise<never>(() => undefined)]);
    } finally {
      reconnects.unsubscribe();
      await dashboard.close();
    }
  } finally {
    await published.close();
    await fleet.close();
    await endpoint.close();
    await service.close();
  }
  return final?.status === 'failed' ? 1 : 0;
}

export const dashboardCommand: Command = defineCommand({
  name: 'dashboard',
  summary: 'a live dashboard of a session in the browser',
  synopsis: 'svc-stream dashboard [FILE] [options]',
  description: `Serve a live dashboard of one conversation-analysis session on 127.0.0.1 and open it in
the browser: the transcript growing with its in-progress lines, speaker roles, the
conversation type, topics, per-speaker topic sentiment, behaviors as they fire, the summary
and the session's status. The session starts when the page first loads (or at once with
--start-now) and runs once: reloading the page shows the current state at once.
Without FILE, the sample call shipped with the package (samples/call.wav) is played with
its config (samples/call.config.json: behaviors and emotions on). FILE is any audio file:
the contract's formats, anything else ffmpeg reads (.m4a …), and headerless raw audio
(.raw .pcm .mulaw …) with --format/--rate/--channels.
With --from redis://…, the supervisor's page instead: every call the fleet publishes there
(analyze, rtp, media-stream, relay with --publish), its status, duration, roles, latest
emotion and behaviors, updated live; a click opens a call's live view (docs/fleet.md).`,
  options: OPTIONS,
  footer: `Environment: SVC_API_KEY, SVC_BASE_URL, SVC_PUBLISH_URL. With neither key nor URL set, an embedded emulator is started.
Prints the page's URL on stdout. Exit status: 0 when stopped (Ctrl-C) or, with
--exit-when-done, after done; 1 when the session failed, with "svc-stream: CODE: message".`,
  positionals: true,
  run,
});

export const dashboardCommands: readonly Command[] = [dashboardCommand];
