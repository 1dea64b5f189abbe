// `svc-stream sip`: answer SIP calls (and SIPREC recording sessions) and analyse each one live.
import { InputError } from '../../errors/index.js';
import { analyzeCalls } from '../../telephony/analyzeCalls.js';
import type { SipCall, SipCallMetadata } from '../../telephony/sip/sipCall.js';
import { createSipServerStats, sipServer } from '../../telephony/sip/sipServer.js';
import { DEFAULT_SIP_CODECS, type SipCodecName } from '../../telephony/sip/sipCodecs.js';
import { callCommandSettings, inCallWorker, runCallCommand, SERVICE_OPTIONS } from '../callCommand.js';
import { defineCommand, type CliIo, type Command } from '../command.js';
import { LOG_FORMAT_OPTION } from '../log.js';
import { option, type OptionValues } from '../options.js';
import { checkTcpPort, checkUdpPorts } from '../portCheck.js';
import { PUBLISH_OPTION } from '../publishFlag.js';
import { REDIS_OPTION } from '../redisFlag.js';
import { BASE_URL_OPTION, CONFIG_OPTION, loadScenario, scenarioOption } from '../sharedOptions.js';

const LOOPBACK = new Set(['127.0.0.1', '::1', 'localhost']);

function portRange(raw: string, flag: string): { min: number; max: number } {
  const m = /^(\d{4,5})-(\d{4,5})$/.exec(raw);
  const min = Number(m?.[1]);
  const max = Number(m?.[2]);
  if (!m || min < 1024 || max > 65535 || max <= min) throw new InputError('invalid_argument', `${flag}: give MIN-MAX, ports 1024-65535 with MIN < MAX (e.g. 20000-29999), got ${raw}`, { path: flag.replace(/^--/, '') });
  return { min, max };
}

function codecList(raw: string, flag: string): SipCodecName[] {
  const names = raw.split(',').map((c) => c.trim().toUpperCase());
  for (const n of names) if (!(DEFAULT_SIP_CODECS as readonly string[]).includes(n)) throw new InputError('invalid_argument', `${flag}: ${n} is not one of ${DEFAULT_SIP_CODECS.join(', ')}`, { path: 'codecs' });
  return names as SipCodecName[];
}

function userPass(raw: string, flag: string): [string, string] {
  const i = raw.indexOf(':');
  if (i <= 0 || i === raw.length - 1) throw new InputError('invalid_argument', `${flag}: give USER:PASSWORD`, { path: 'user' });
  return [raw.slice(0, i), raw.slice(i + 1)];
}

const OPTIONS = {
  port: option.integer('N', 'SIP port, UDP and TCP (default 5060; 0 picks a free one, printed on stderr)', { min: 0, max: 65535, fallback: 5060 }),
  host: option.text('H', 'interface for SIP and RTP (default 127.0.0.1; any other needs --allow or --user)', '127.0.0.1'),
  'public-address': option.text('IP', 'the address callers reach, put in Contact and SDP (default --host)'),
  'rtp-ports': option.custom('MIN-MAX', 'UDP ports for RTP (default 20000-29999; even ones used, two per SIPREC call)', (raw, flag) => (raw === undefined ? undefined : portRange(raw, flag))),
  codecs: option.custom('LIST', 'codecs taken, in order of preference (default PCMU,PCMA,L16,G722;\nG722 is decoded by ffmpeg)', (raw, flag) => (raw === undefined ? undefined : codecList(raw, flag))),
  'max-calls': option.integer('N', 'calls at once (default 3): more INVITEs are answered 503 with Retry-After\n(or 486 with --when-full 486), and as many sessions run', { min: 1, fallback: 3 }),
  'when-full': option.choice('S', ['503', '486'], '503 (default: Retry-After, the trunk tries elsewhere) or 486 Busy Here', '503'),
  'retry-after': option.integer('S', 'Retry-After of a 503, seconds (default 5)', { min: 0 }),
  'rtp-timeout': option.integer('MS', 'a call ends (BYE sent) after this long without RTP, not on hold (default 30000)', { min: 1 }),
  allow: option.list('IP', 'take SIP and RTP only from this address (repeatable); others are dropped and counted'),
  user: option.list('USER:PASS', 'ask INVITEs for digest credentials (SHA-256 or MD5) of this user (repeatable;\ndefault SVC_SIP_USER, USER:PASS)', userPass),
  realm: option.text('R', 'the digest realm (default svc-stream)'),
  siprec: option.choice('M', ['stereo', 'separate'], 'a SIPREC call: stereo (default: one session, a channel per participant)\nor separate (a session per participant)', 'stereo'),
  jitter: option.integer('MS', 'longest wait for a missing packet (default 60)', { min: 0 }),
  'frame-ms': option.integer('MS', "send each call's audio in frames of MS ms (default 100; 20 for the lowest latency)", { min: 0 }),
  workers: option.integer('N', 'worker processes sharing the calls (default 1): worker i answers on --port + i and\ntakes its slice of --rtp-ports; --max-calls holds across them', { min: 1, fallback: 1 }),
  'exit-after': option.integer('N', 'once N calls have ended take no new call (503), and exit when those running end', { min: 1 }),
  ...SERVICE_OPTIONS,
  ...LOG_FORMAT_OPTION,
  ...CONFIG_OPTION,
  ...scenarioOption("what the embedded emulator plays (`sample`: the shipped call's)"),
  ...BASE_URL_OPTION,
  json: option.flag('one NDJSON line per call start, metadata update, event and call end'),
  ...REDIS_OPTION,
  ...PUBLISH_OPTION,
} as const;

/** The participants of a call as one line: `Alice <sip:alice@…> on 1, Bob <sip:bob@…> on 2`. */
export function participantsLine(m: SipCallMetadata): string {
  return m.participants
    .map((p) => {
      const who = p.name && p.aor ? `${p.name} <${p.aor}>` : (p.name ?? p.aor ?? p.id);
      return p.channel !== undefined ? `${who} on ${p.channel}` : who;
    })
    .join(', ');
}

function metadataJson(m: SipCallMetadata): Record<string, unknown> {
  return {
    kind: m.kind,
    sip_call_id: m.callId,
    from: m.from,
    to: m.to,
    participants: m.participants,
    ...(m.recording ? { recording: m.recording } : {}),
    held: m.held,
  };
}

async function run({ values }: { readonly values: OptionValues<typeof OPTIONS> }, io: CliIo): Promise<number> {
  const users = new Map(values.user);
  const envUser = io.env['SVC_SIP_USER'];
  if (users.size === 0 && envUser) {
    const [u, p] = userPass(envUser, 'SVC_SIP_USER');
    users.set(u, p);
  }
  if (users.size === 0 && values.allow.length === 0 && !LOOPBACK.has(values.host)) {
    throw new InputError('invalid_argument', `listening on ${values.host} needs --allow (the SBC or PBX addresses) or --user (digest credentials): anyone who can reach it could place calls into your account`, { path: 'allow' });
  }
  const exitAfter = values['exit-after'];
  // Before anything starts (no emulator, no worker): the SIP ports free (worker i on --port + i).
  if (!inCallWorker()) {
    await checkUdpPorts('port', values.host, values.port, values.workers);
    for (let i = 0; i < values.workers && values.port !== 0; i++) await checkTcpPort('port', values.host, values.port + i);
  }
  const scenario = values.scenario ? await loadScenario(values.scenario) : undefined;
  const serverStats = createSipServerStats();
  const json = values.json === true;
  const perDialog = values.siprec === 'separate' ? 2 : 1;
  const settings = callCommandSettings(
    // A call beyond --max-calls is SIP's to refuse (503 or 486): the sessions never queue a call SIP answered.
    { ...values, 'max-calls': values['max-calls'] * perDialog, 'when-full': 'queue' },
    {
      exitAfter,
      scenario,
      ownHttpPort: false,
      port: { flag: 'port', port: values.port, host: values.host },
      totals: { source: 'sipServer', keys: ['invites', 'answered', 'busy', 'drainRefused', 'unauthorized', 'notAcceptable', 'malformed', 'byes', 'rtpTimeouts'], stats: serverStats },
    },
  );

  return runCallCommand<SipCall>(
    io,
    settings,
    (run) =>
      analyzeCalls(
        sipServer({
          ...(run.worker ? { worker: run.worker } : {}),
          lifecycle: run.lifecycle,
          host: values.host,
          port: values.port,
          ...(values['public-address'] !== undefined ? { publicAddress: values['public-address'] } : {}),
          ...(values['rtp-ports'] !== undefined ? { rtpPorts: values['rtp-ports'] } : {}),
          ...(values.codecs !== undefined ? { codecs: values.codecs } : {}),
          maxCalls: values['max-calls'],
          whenFull: values['when-full'],
          ...(values['retry-after'] !== undefined ? { retryAfterS: values['retry-after'] } : {}),
          ...(values['rtp-timeout'] !== undefined ? { rtpTimeoutMs: values['rtp-timeout'] } : {}),
          ...(values.allow.length > 0 ? { allowedSources: values.allow } : {}),
          ...(users.size > 0 ? { auth: { users: Object.fromEntries(users), ...(values.realm !== undefined ? { realm: values.realm } : {}) } } : {}),
          siprec: { mode: values.siprec },
          ...(values.jitter !== undefined ? { playoutDelayMs: values.jitter } : {}),
          ...(values['frame-ms'] !== undefined ? { frameMs: values['frame-ms'] } : {}),
          stats: serverStats,
          onListening: (a) => io.stderr.write(`svc-stream: SIP on ${a.address}:${a.port} (UDP and TCP)\n`),
          // Once per process family: a worker hands it to the primary.
          onWarning: (w) => run.warn(w.code, w.message.replace('Raise maxCalls', 'Raise --max-calls')),
          onRefused: (r) => {
            // A flood must not flood the terminal: the reasons that come in bulk are only counted.
            if (r.reason === 'busy' || r.reason === 'draining' || r.reason === 'disallowed_source' || r.reason === 'no_credentials') return;
            io.stderr.write(`svc-stream: refused ${r.remote.transport} ${r.remote.address}:${r.remote.port}: ${r.reason}: ${r.message}\n`);
          },
        }),
        run.analyze<SipCall>(),
      ),
    (call) => {
      const c = call.call;
      const fmt = `${c.codec.name}/${c.codec.clockRate} as ${c.format.audio_format}/${c.format.sample_rate}${c.format.num_channels > 1 ? `/${c.format.num_channels}` : ''}`;
      const out = (line: string): void => void io.stdout.write(`${line}\n`);
      // Metadata updates after the first (a SIPREC re-INVITE or UPDATE, a hold), and how SIP ended the call.
      let first = true;
      c.metadata$.subscribe((m) => {
        if (first) return void (first = false);
        if (json) out(JSON.stringify({ type: 'metadata', id: call.id, metadata: metadataJson(m) }));
        else out(`${call.id} metadata: ${participantsLine(m)}${m.held ? ' (on hold)' : ''}`);
      });
      c.ended$.subscribe((why) => {
        if (json) out(JSON.stringify({ type: 'sip_end', id: call.id, reason: why }));
        else out(`${call.id} sip ${why}`);
      });
      return {
        started: {
          text: `${c.metadata.kind === 'siprec' ? 'recording' : 'call'} ${c.title} from ${c.remote.address}:${c.remote.port}/${c.remote.transport} (${fmt}): ${participantsLine(c.metadata)}, ${call.status}`,
          json: { type: 'call', id: call.id, title: c.title, codec: c.codec.name, format: c.format, status: call.status, remote: c.remote, metadata: metadataJson(c.metadata) },
        },
        counters: () => {
          const streams = Object.values(c.stats.streams);
          const sum = (k: 'received' | 'lost' | 'late' | 'duplicated' | 'reordered' | 'dtmf') => streams.reduce((n, s) => n + s[k], 0);
          return { received: sum('received'), lost: sum('lost'), late: sum('late'), duplicated: sum('duplicated'), reordered: sum('reordered'), dtmf: sum('dtmf') };
        },
      };
    },
  );
}

export const sipCommand: Command = defineCommand({
  name: 'sip',
  summary: 'answer SIP calls and SIPREC recording sessions, and analyse each one live',
  synopsis: 'svc-stream sip [options]',
  description: `A SIP server (UDP and TCP) that answers calls and analyses each one live in its own
session, printing one line per result prefixed with the call's id (or NDJSON with --json).
Point a PBX trunk, a dialplan or an SBC's SIPREC recording at it. It answers PCMU, PCMA,
L16 or G.722 (ignoring telephone-event), receives RTP on --rtp-ports, and ends a call on BYE
or --rtp-timeout without RTP. A SIPREC INVITE (RFC 7866) becomes one two-channel session, a
channel per participant, with the participants' names and addresses shown.`,
  options: OPTIONS,
  footer: `Environment: SVC_API_KEY, SVC_BASE_URL, SVC_SIP_USER (USER:PASS). With neither key nor URL, an
embedded emulator is started.
Exit status: 0 when every call it took ended done (after --exit-after calls, or a signal: the
first drains, new INVITEs answered 503 with Retry-After, a second ends the calls in flight
with BYE); 1 when one did not (failed, ended shutdown, lost with a worker), or it cannot
listen; 2 for a usage mistake or a port in use.`,
  run,
});
