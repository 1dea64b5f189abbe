// `svc-stream emulator`: run the local emulator in the foreground until interrupted.
import { spawn } from 'node:child_process';
import { rename, rm, writeFile } from 'node:fs/promises';
import { constants as osConstants } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { InputError } from '../../errors/index.js';
import type { EmulatorOptions } from '../../emulator/server.js';
import { defineCommand, type CliIo, type Command } from '../command.js';
import { option, type OptionValues } from '../options.js';
import { checkInputFile, scenarioOption } from '../sharedOptions.js';
import { exitWithParent } from '../exitWithParent.js';
import { LOG_FORMAT_OPTION } from '../log.js';
import { checkTcpPort } from '../portCheck.js';
import { checkMetricsPackage } from '../optionalFlags.js';
import { METRICS_OPTIONS, startCommandService } from '../service.js';
import { OPS_PATHS } from '../../service/opsHttp.js';

const OPTIONS = {
  port: option.integer('N', 'port to listen on (default 0: a free port)', { min: 0, max: 65535 }),
  host: option.text('H', 'interface (default 127.0.0.1)'),
  config: option.custom('FILE', 'JSON: organizations and their limits, scenarios, platform account\n(see docs/emulator.md, "Config file"); flags win over it', (raw, flag) => {
    if (raw !== undefined) checkInputFile(raw, flag);
    return raw;
  }),
  ...scenarioOption("JSON scenario the streaming endpoint plays for every connection;\n`sample` is the one of the sample call the package ships"),
  'write-env': option.text('PATH', "once listening, write the KEY=value lines to PATH (atomically: the file\nappears whole or not at all); removed when the emulator stops"),
  log: option.flag('log each request (never a key) on stderr'),
  ...METRICS_OPTIONS,
  ...LOG_FORMAT_OPTION,
} as const;

async function loading<T>(what: string, load: () => Promise<T>): Promise<T> {
  try {
    return await load();
  } catch (err) {
    throw new InputError('invalid_argument', `cannot use the ${what}: ${(err as Error).message}`, { path: what });
  }
}

async function run({ values, rest }: { readonly values: OptionValues<typeof OPTIONS>; readonly rest: readonly string[] }, io: CliIo): Promise<number> {
  const port = values.port ?? 0;
  // The emulator is loaded only by the command that runs it (its own entry point).
  const { loadEmulatorConfig, loadScenarioFile, startEmulator } = await import('../../emulator/index.js');
  const fromFile = values.config ? await loading('config', () => loadEmulatorConfig(values.config!)) : {};
  const scenarioFile = values.scenario;
  const scenario = scenarioFile ? await loading('scenario', () => loadScenarioFile(scenarioFile)) : undefined;
  const options: EmulatorOptions = {
    ...fromFile,
    ...(values.port !== undefined || fromFile.port === undefined ? { port } : {}),
    ...(values.host ? { host: values.host } : {}),
    ...(scenario !== undefined ? { scenario } : {}),
    ...(values.log ? { log: (line: string) => io.stderr.write(`emulator: ${line}\n`) } : {}),
  };
  // Before anything starts: the ports free.
  await checkTcpPort('port', values.host ?? '127.0.0.1', values.port);
  await checkTcpPort('metrics-port', values['metrics-host'], values['metrics-port']);
  await checkMetricsPackage(values['metrics-port']);
  // Its figures and the operator's endpoints (on its own port, or --metrics-port); it watches its signals and parent itself.
  let running: Awaited<ReturnType<typeof startEmulator>> | undefined;
  const service = await startCommandService(io, {
    drainTimeoutMs: 0,
    metricsPort: values['metrics-port'],
    metricsHost: values['metrics-host'],
    ownHttpPort: true,
    watch: false,
    extra: () => [
      { name: 'svc_stream_emulator_sessions_finished_total', help: 'Streaming connections the emulator closed, by the status they were in.', type: 'counter', labels: ['status'], samples: () => countBy(running?.connections ?? [], (c) => c.status) },
    ],
  });
  const onRequest = service.onRequest;
  const emu = await startEmulator({
    ...options,
    routes: [...(options.routes ?? []), ...(onRequest ? OPS_PATHS.map((path) => ({ method: 'GET', path, handler: (req: Parameters<typeof onRequest>[0], res: Parameters<typeof onRequest>[1]) => void onRequest(req, res) })) : [])],
  }).catch(async (e: unknown) => {
    await service.close();
    throw e;
  });
  running = emu;
  service.lifecycle.ready();
  const envFile = values['write-env'];
  try {
    if (envFile !== undefined) await writeEnvFile(envFile, emu.envLines());
    if (rest.length > 0) {
      io.stderr.write(`svc-stream: emulator listening on ${emu.baseUrl}; running ${rest.join(' ')}\n`);
      return await runWith(rest, emu.envLines(), io);
    }
    const parent = exitWithParent(io);
    io.stdout.write(`${emu.envLines().join('\n')}\n`);
    io.stderr.write(`svc-stream: emulator listening on ${emu.baseUrl}${envFile !== undefined ? `; variables in ${envFile}` : ''} (Ctrl-C to stop)\n`);
    await new Promise<void>((resolve) => {
      if (parent.signal.aborted) resolve();
      parent.signal.addEventListener('abort', () => resolve(), { once: true });
    });
    parent.dispose();
    if (parent.signal.reason !== 'signal') io.stderr.write(`svc-stream: emulator stopping: ${String(parent.signal.reason)}\n`);
    return 0;
  } finally {
    if (envFile !== undefined) await rm(envFile, { force: true });
    // A planned stop, not a crash: live sessions get an `error` event and the going-away close
    // (1012), so their clients reconnect to the next emulator instead of reporting a drop.
    service.lifecycle.drain('stopping');
    await emu.shutdown();
    await service.close();
  }
}

/** How many of `items` fall under each key, as metric samples. */
function countBy<T>(items: readonly T[], key: (item: T) => string): { labels: Record<string, string>; value: number }[] {
  const counts = new Map<string, number>();
  for (const i of items) counts.set(key(i), (counts.get(key(i)) ?? 0) + 1);
  return [...counts].map(([k, value]) => ({ labels: { status: k }, value }));
}

/** Write `lines` to `path` whole or not at all: a reader never sees a half-written file. */
async function writeEnvFile(path: string, lines: readonly string[]): Promise<void> {
  const tmp = join(dirname(path), `.${basename(path)}.${process.pid}.tmp`);
  try {
    await writeFile(tmp, `${lines.join('\n')}\n`, { mode: 0o600 });
    await rename(tmp, path);
  } catch (err) {
    await rm(tmp, { force: true });
    throw new InputError('invalid_argument', `--write-env ${path}: cannot write it (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`, { path: 'write-env' });
  }
}

/**
 * Run `argv` with the emulator's variables in its environment, its output on the command's,
 * and resolve to its exit status (128 + the signal's number when a signal ended it). Ctrl-C
 * reaches it as SIGTERM (as SIGINT reaches a foreground job: the shell signals both).
 */
function runWith(argv: readonly string[], lines: readonly string[], io: CliIo): Promise<number> {
  const env = { ...io.env };
  for (const line of lines) {
    const at = line.indexOf('=');
    env[line.slice(0, at)] = line.slice(at + 1);
  }
  return new Promise<number>((resolve) => {
    const own = io.stdout === process.stdout;
    const child = spawn(argv[0]!, argv.slice(1), { env, stdio: [own ? 'inherit' : 'ignore', own ? 'inherit' : 'pipe', own ? 'inherit' : 'pipe'] });
    child.stdout?.pipe(io.stdout, { end: false });
    child.stderr?.pipe(io.stderr, { end: false });
    const onAbort = (): void => void child.kill('SIGTERM');
    io.signal?.addEventListener('abort', onAbort, { once: true });
    child.once('error', (err: NodeJS.ErrnoException) => {
      io.signal?.removeEventListener('abort', onAbort);
      io.stderr.write(`svc-stream: cannot run ${argv[0]}: ${err.code === 'ENOENT' ? 'no such command' : err.message}\n`);
      resolve(127);
    });
    child.once('close', (code, signal) => {
      io.signal?.removeEventListener('abort', onAbort);
      resolve(code ?? 128 + (signal ? (osConstants.signals[signal] ?? 0) : 0));
    });
  });
}

export const emulatorCommand: Command = defineCommand({
  name: 'emulator',
  summary: 'run the local emulator of the service on loopback',
  synopsis: 'svc-stream emulator [options] [-- COMMAND [ARGS...]]',
  description: `Run the local emulator of the whole service interface on loopback.

With a COMMAND after --, run it with the emulator's variables (SVC_BASE_URL, SVC_API_KEY,
SVC_PLATFORM_URL, SVC_ACCOUNT_UUID, SVC_PLATFORM_API_KEY) in its environment, and stop the
emulator when it exits, with its exit status:

  svc-stream emulator --scenario sample -- npx tsx example.ts

Without one, run until interrupted, until its parent exits or its stdout is closed, printing
the five KEY=value lines on stdout once it listens; --write-env writes them to a file (whole,
once listening) for another shell to read: set -a; . PATH; set +a. On SIGINT or SIGTERM, live
streaming sessions get an error event and close 1012 (service restart), then it exits.`,
  options: OPTIONS,
  rest: true,
  run,
});
