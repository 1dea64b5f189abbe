// `svc-stream relay FILE...`: one live session per file, their raw events relayed to browser
// pages (server-sent events) from an allow-list of origins with a token; the API key stays here.
import { randomBytes } from 'node:crypto';
import { basename, extname } from 'node:path';
import { AUDIO_OPTIONS, fileAudio } from '../audioFlags.js';
import { option, type OptionValues } from '../options.js';
import { BASE_URL_OPTION, checkInputFile, CONFIG_OPTION, loadScenario, scenarioOption } from '../sharedOptions.js';
import { InputError } from '../../errors/index.js';
import { createRelay } from '../../relay/server.js';
import { errorSummary, type RelayEnd } from '../../relay/protocol.js';
import { commandPublisher, fromOption, PUBLISH_OPTION } from '../publishFlag.js';
import { conversationSession } from '../../session/conversation.js';
import { aborted, defineCommand, type CliIo, type Command } from '../command.js';
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
} as const;

async function run({ values, positionals }: { readonly values: OptionValues<typeof OPTIONS>; readonly positionals: string[] }, io: CliIo): Promise<number> {
  const from = values.from;
  if (positionals.length === 0 && from === undefined) throw new InputError('invalid_argument', 'relay needs at least one FILE, or --from URL');
  if (positionals.length === 0 && values['exit-when-done']) throw new InputError('invalid_argument', '--exit-when-done needs a FILE to wait for', { path: 'exit-when-done' });
  const ids = new Set<string>();
  for (const file of positionals) {
    checkInputFile(file);
    const id = basename(file, extname(file));
    if (ids.has(id)) throw new InputError('invalid_argument', `two FILEs have the stem ${id}: session ids must differ`, { path: 'FILE' });
    ids.add(id);
  }
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

  const endpoint = await openEndpoint({ baseUrl: values['base-url'] }, io, scenario !== undefined ? { scenario: scenario as never } : {});
  const ends: Promise<RelayEnd>[] = [];
  const running: (() => void)[] = [];
  try {
    if (endpoint.emulator && scenarioPath) io.stderr.write(`svc-stream: the emulator plays ${scenarioPath}\n`);
    const { url } = await relay.listen({ port, host: values.host });
    io.stdout.write(`svc-stream relay: ${url}\n`);
    if (madeToken) io.stdout.write(`svc-stream relay token: ${token} (set SVC_RELAY_TOKEN to choose one)\n`);
    for (const file of positionals) {
      const id = basename(file, extname(file));
      const stats = createSessionStats();
      const session$ = published.session(id, basename(file), conversationSession(fileAudio(file, values, speed), { apiKey: endpoint.apiKey, baseUrl: endpoint.baseUrl, config, stats }), stats.state$);
      let ended: Promise<RelayEnd>;
      if (from !== undefined) {
        ended = new Promise((resolve) => {
          const sub = session$.subscribe({
            error: (err: unknown) => resolve({ status: 'failed', error: errorSummary(err) }),
            complete: () => resolve({ status: 'done' }),
          });
          running.push(() => {
            sub.unsubscribe();
            resolve({ status: 'closed' });
          });
        });
      } else {
        const session = relay.addSession({ id, title: basename(file) });
        session.follow(stats.state$);
        session.feed(session$);
        ended = session.ended;
      }
      ends.push(
        ended.then((end) => {
          const what = end.status === 'failed' ? `failed: ${end.error?.code}: ${end.error?.message}` : end.status;
          io.stderr.write(`svc-stream: session ${id} ${what}\n`);
          return end;
        }),
      );
    }
    if (from !== undefined) io.stderr.write(`svc-stream: serving every session published to ${published.publisher?.target ?? from.replace(/\/\/[^@/]*@/, '//***@')}\n`);
    if (positionals.length > 0) io.stderr.write(`svc-stream: relaying ${positionals.length} session(s) at ${speed}x live pace; ${values['exit-when-done'] ? 'exits when done' : 'Ctrl-C to stop'}\n`);
    await Promise.race([aborted(io.signal), values['exit-when-done'] ? Promise.all(ends) : new Promise<never>(() => undefined)]);
  } finally {
    for (const stop of running) stop();
    await relay.close();
    await published.close();
    await endpoint.close();
  }
  const settled = await Promise.all(ends);
  return settled.some((e) => e.status === 'failed') ? 1 : 0;
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
SVC_API_KEY, SVC_BASE_URL, SVC_PUBLISH_URL. Prints the relay's URL on stdout. Exit status: 0 when stopped
(Ctrl-C) or, with --exit-when-done, when every session is done; 1 when a session failed.`,
  positionals: true,
  run,
});

export const relayCommands: readonly Command[] = [relayCommand];
