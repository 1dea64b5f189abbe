// `svc-stream rtp`: receive RTP calls and analyse each one live.
import { InputError } from '../../errors/index.js';
import { analyzeCalls } from '../../telephony/analyzeCalls.js';
import { parsePayloadTypeArg, type PayloadTypeSpec } from '../../telephony/payloadTypes.js';
import { createRtpSourceStats, type CallLeg } from '../../telephony/RtpLegs.js';
import { hasReusePort, rtpSource } from '../../telephony/rtpSource.js';
import type { LimitWarning, PayloadTypeWarning } from '../../warnings.js';
import { callCommandSettings, inCallWorker, runCallCommand, SERVICE_OPTIONS } from '../callCommand.js';
import { defineCommand, type CliIo, type Command } from '../command.js';
import { option, type OptionValues } from '../options.js';
import { PUBLISH_OPTION } from '../publishFlag.js';
import { REDIS_OPTION } from '../redisFlag.js';
import { BASE_URL_OPTION, CONFIG_OPTION, loadScenario, scenarioOption } from '../sharedOptions.js';
import { LOG_FORMAT_OPTION } from '../log.js';
import { checkUdpPorts } from '../portCheck.js';

const OPTIONS = {
  port: option.integer('N', 'UDP port (default 5004; 0 picks a free one, printed on stderr)', { min: 0, max: 65535, fallback: 5004 }),
  host: option.text('H', 'interface to listen on (default 127.0.0.1)', '127.0.0.1'),
  'payload-type': option.list(
    'PT=codec[/rate[/channels]]',
    'map a dynamic payload type, e.g. 96=L16/16000, 97=opus/48000/2, 101=telephone-event\n(repeatable; codecs: PCMU PCMA L16 G722 opus telephone-event CN)',
    (raw) => parsePayloadTypeArg(raw),
  ),
  jitter: option.integer('MS', 'longest wait for a missing packet (default 60)', { min: 0 }),
  'idle-timeout': option.integer('MS', 'a call ends after this long without packets (default 5000)', { min: 1 }),
  'max-calls': option.integer('N', 'sessions at once (default 3)', { min: 1, fallback: 3 }),
  'max-legs': option.integer('N', 'call legs (SSRCs) at once; packets of more are dropped and counted (default 64)', { min: 1 }),
  'frame-ms': option.integer('MS', "send each call's audio in frames of MS ms (default 100: a fifth of the sends\nof one per packet, audio at most 100 ms later; 20 for the lowest latency)", { min: 0 }),
  'when-full': option.choice('P', ['queue', 'reject'], 'queue (default) or reject calls beyond --max-calls', 'queue'),
  workers: option.integer('N', 'worker processes sharing the calls (default 1): worker i listens on --port + i\n(or all on --port with --reuse-port); --max-legs and --max-calls hold across them', { min: 1, fallback: 1 }),
  'reuse-port': option.flag('with --workers, every worker on --port (SO_REUSEPORT; Node 22.12 or later)'),
  'exit-after': option.integer('N', 'once N calls have ended take no new call, and exit when those running end', { min: 1 }),
  ...SERVICE_OPTIONS,
  ...LOG_FORMAT_OPTION,
  ...CONFIG_OPTION,
  ...scenarioOption("what the embedded emulator plays (`sample`: the shipped call's)"),
  ...BASE_URL_OPTION,
  json: option.flag('one NDJSON line per call start, event and call end'),
  ...REDIS_OPTION,
  ...PUBLISH_OPTION,
} as const;

async function run({ values }: { readonly values: OptionValues<typeof OPTIONS> }, io: CliIo): Promise<number> {
  const payloadTypes: Record<number, PayloadTypeSpec> = Object.fromEntries(values['payload-type']);
  const port = values.port;
  const exitAfter = values['exit-after'];
  if (values['reuse-port'] && !hasReusePort()) throw new InputError('invalid_argument', `--reuse-port needs Node 22.12 or later (this is ${process.versions.node}); without it each worker takes its own port, --port + i`, { path: 'reuse-port' });
  // Before anything starts (no emulator, no worker): the ports free.
  if (!inCallWorker()) await checkUdpPorts('port', values.host, port, values['reuse-port'] ? 1 : values.workers);
  const scenario = values.scenario ? await loadScenario(values.scenario) : undefined;
  const sourceStats = createRtpSourceStats();
  const settings = callCommandSettings(values, {
    exitAfter,
    scenario,
    ownHttpPort: false,
    port: { flag: 'port', port, host: values.host },
    totals: { source: 'rtpSource', keys: ['datagrams', 'legs', 'refusedLegs', 'refusedDraining', 'malformed'], stats: sourceStats },
  });
  return runCallCommand<CallLeg>(
    io,
    settings,
    (run) =>
      analyzeCalls(
        rtpSource({
          ...(run.worker ? { worker: run.worker } : {}),
          ...(values['reuse-port'] ? { reusePort: true } : {}),
          lifecycle: run.lifecycle,
          host: values.host,
          port,
          payloadTypes,
          stats: sourceStats,
          ...(values.jitter !== undefined ? { playoutDelayMs: values.jitter } : {}),
          ...(values['idle-timeout'] !== undefined ? { idleTimeoutMs: values['idle-timeout'] } : {}),
          ...(values['max-legs'] !== undefined ? { maxLegs: values['max-legs'] } : {}),
          ...(values['frame-ms'] !== undefined ? { frameMs: values['frame-ms'] } : {}),
          onListening: (a) => io.stderr.write(`svc-stream: listening for RTP on ${a.address}:${a.port}${run.worker ? ` (worker ${run.worker.index})` : ''}\n`),
          // Once per process family: a worker hands it to the primary.
          onWarning: (w) => run.warn('payloadType' in w ? `${w.code}:${w.payloadType}` : w.code, warningLine(w)),
        }),
        run.analyze<CallLeg>(),
      ),
    (call) => {
      const leg = call.call;
      const fmt = `${leg.codec.name}/${leg.codec.clockRate} as ${leg.format.audio_format}`;
      return {
        started: {
          text: `call from ${leg.remote.address}:${leg.remote.port} (${fmt}), ${call.status}`,
          json: { type: 'call', id: call.id, ssrc: leg.ssrc, payload_type: leg.payloadType, codec: leg.codec.name, format: leg.format, status: call.status, remote: leg.remote },
        },
        counters: () => {
          const s = leg.stats;
          return { received: s.received, lost: s.lost, late: s.late, duplicated: s.duplicated, reordered: s.reordered, dtmf: s.dtmf, cn: s.cn, rtcp: s.rtcp };
        },
      };
    },
  );
}

/** A source's warning in the command line's words: the flag, not the option. */
function warningLine(w: LimitWarning | PayloadTypeWarning): string {
  if (w.option !== 'payloadTypes') return w.message.replace('Raise maxLegs', 'Raise --max-legs');
  const map = `--payload-type ${w.payloadType}=${w.mapping ?? 'CODEC/RATE'}`;
  return w.message.replace(/^rtpSource: /, '').replace(/Map it in payloadTypes.*$/, w.mapping ? `Map it with ${map} to be sure.` : `Map it with ${map} (e.g. ${w.payloadType}=PCMU/16000, ${w.payloadType}=PCMA/8000, ${w.payloadType}=L16/16000, ${w.payloadType}=opus/48000/2).`);
}

export const rtpCommands: readonly Command[] = [
  defineCommand({
    name: 'rtp',
    summary: 'receive RTP calls on a UDP port and analyse each one live',
    synopsis: 'svc-stream rtp [options]',
    description: `Listen for RTP on a UDP port and analyse every call leg (one per SSRC) in its own live
session, printing one line per result, prefixed with the leg's id.
PCMU (0), PCMA (8), G.722 (9), L16 (10, 11) are known; map dynamic payload types with
--payload-type. An unmapped dynamic type is told from its packets where they leave no doubt
(G.711 or L16 at any rate, Opus), and said once. DTMF and comfort noise are dropped; RTCP on
the same port is ignored.`,
    options: OPTIONS,
    footer: `Environment: SVC_API_KEY, SVC_BASE_URL. With neither set, an embedded emulator is started.
Exit status: 0 when every call it took ended done (after --exit-after calls, or a signal: the
first drains, a second ends the calls in flight); 1 when one did not (failed, ended shutdown,
lost with a worker), or the socket failed; 2 for a usage mistake or a port in use.`,
    run,
  }),
];
