// `svc-stream rtp`: receive RTP calls and analyse each one live.
import { parseArgs } from 'node:util';
import { InputError } from '../../errors.js';
import { analyzeCalls, createAnalyzeCallsStats } from '../../telephony/analyzeCalls.js';
import { fleetLimits, REDIS_HELP, REDIS_OPTION } from '../redisFlag.js';
import { parsePayloadTypeArg, type PayloadTypeSpec } from '../../telephony/payloadTypes.js';
import { createRtpSourceStats, rtpSource } from '../../telephony/rtpSource.js';
import { configFlag, printError, readJsonFile, type CliIo, type Command } from '../command.js';
import { openEndpoint } from '../endpoint.js';
import { showCalls } from '../callView.js';
import { minFlag } from '../numberFlag.js';

const USAGE = `Usage: svc-stream rtp [options]

Listen for RTP on a UDP port and analyse every call leg (one per SSRC) in its own live
session, printing one line per result, prefixed with the leg's id.
PCMU (0), PCMA (8), G.722 (9), L16 (10, 11) are known; map dynamic payload types with
--payload-type. DTMF and comfort noise are dropped; RTCP on the same port is ignored.

Options:
  --port N              UDP port (default 5004; 0 picks a free one, printed on stderr)
  --host H              interface to listen on (default 127.0.0.1)
  --payload-type PT=codec[/rate[/channels]]
                        map a dynamic payload type, e.g. 96=L16/16000, 97=opus/48000/2, 101=telephone-event
                        (repeatable; codecs: PCMU PCMA L16 G722 opus telephone-event CN)
  --jitter MS           longest wait for a missing packet (default 60)
  --idle-timeout MS     a call ends after this long without packets (default 5000)
  --max-calls N         sessions at once (default 3)
  --max-legs N          call legs (SSRCs) at once; packets of more are dropped and counted (default 64)
  --frame-ms MS         send each call's audio in frames of MS ms (default 100: a fifth of the sends
                        of one per packet, audio at most 100 ms later; 20 for the lowest latency)
  --when-full P         queue (default) or reject calls beyond --max-calls
  --exit-after N        exit once N calls have ended
  --config FILE         BatchConfig JSON file, or 'default' (the default)
  --scenario FILE       what the embedded emulator plays
  --base-url URL        models API base (default SVC_BASE_URL, else the embedded emulator)
  --json                one NDJSON line per call start, event and call end
${REDIS_HELP}
  -h, --help            this help

Environment: SVC_API_KEY, SVC_BASE_URL. With neither set, an embedded emulator is started.
Exit status: 0 after --exit-after calls (or Ctrl-C); 1 on failure to listen.`;

async function run(argv: readonly string[], io: CliIo): Promise<number> {
  const { values } = parseArgs({
    args: [...argv],
    options: {
      port: { type: 'string' },
      host: { type: 'string' },
      'payload-type': { type: 'string', multiple: true },
      jitter: { type: 'string' },
      'idle-timeout': { type: 'string' },
      'max-calls': { type: 'string' },
      'max-legs': { type: 'string' },
      'frame-ms': { type: 'string' },
      'when-full': { type: 'string' },
      'exit-after': { type: 'string' },
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
  const payloadTypes: Record<number, PayloadTypeSpec> = {};
  for (const arg of values['payload-type'] ?? []) {
    const [pt, spec] = parsePayloadTypeArg(arg);
    payloadTypes[pt] = spec;
  }
  const whenFull = values['when-full'] ?? 'queue';
  if (whenFull !== 'queue' && whenFull !== 'reject') throw new InputError('invalid_argument', `--when-full expects queue or reject, got '${whenFull}'`, { path: 'when-full' });
  const port = minFlag(values.port, 'port', 5004, 0);
  const exitAfter = values['exit-after'] !== undefined ? minFlag(values['exit-after'], 'exit-after', 1, 1) : undefined;
  const config = configFlag(values.config);
  const scenario = values.scenario ? readJsonFile(values.scenario, 'scenario') : undefined;

  const endpoint = await openEndpoint({ baseUrl: values['base-url'] }, io, scenario !== undefined ? { scenario: scenario as never } : {});
  const fleet = await fleetLimits(values.redis, io.env);
  const sourceStats = createRtpSourceStats();
  const callStats = createAnalyzeCallsStats();
  const out = (line: string): void => void io.stdout.write(`${line}\n`);
  const json = values.json === true;

  try {
    return await showCalls(
      io,
      exitAfter,
      () =>
        analyzeCalls(
          rtpSource({
            host: values.host ?? '127.0.0.1',
            port,
            payloadTypes,
            stats: sourceStats,
            ...(values.jitter !== undefined ? { playoutDelayMs: minFlag(values.jitter, 'jitter', 60, 0) } : {}),
            ...(values['idle-timeout'] !== undefined ? { idleTimeoutMs: minFlag(values['idle-timeout'], 'idle-timeout', 5000, 1) } : {}),
            ...(values['max-legs'] !== undefined ? { maxLegs: minFlag(values['max-legs'], 'max-legs', 64, 1) } : {}),
            ...(values['frame-ms'] !== undefined ? { frameMs: minFlag(values['frame-ms'], 'frame-ms', 100, 0) } : {}),
            onListening: (a) => io.stderr.write(`svc-stream: listening for RTP on ${a.address}:${a.port}\n`),
            onWarning: (w) => io.stderr.write(`svc-stream: ${w.message.replace('Raise maxLegs', 'Raise --max-legs')}\n`),
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
        const leg = call.call;
        const fmt = `${leg.codec.name}/${leg.codec.clockRate} as ${leg.format.audio_format}`;
        return {
          json,
          out,
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
  } catch (err) {
    printError(io, err);
    return 1;
  } finally {
    await fleet.close();
    await endpoint.close();
  }
}

export const rtpCommands: readonly Command[] = [
  {
    name: 'rtp',
    summary: 'receive RTP calls on a UDP port and analyse each one live',
    usage: USAGE,
    run,
  },
];
