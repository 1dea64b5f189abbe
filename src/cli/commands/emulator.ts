// `svc-stream emulator`: run the local emulator in the foreground until interrupted.
import { InputError } from '../../errors.js';
import type { EmulatorOptions } from '../../emulator/server.js';
import { defineCommand, type CliIo, type Command } from '../command.js';
import { option, type OptionValues } from '../options.js';
import { checkInputFile, scenarioOption } from '../sharedOptions.js';
import { exitWithParent } from '../exitWithParent.js';

const OPTIONS = {
  port: option.integer('N', 'port to listen on (default 0: a free port)', { min: 0, max: 65535 }),
  host: option.text('H', 'interface (default 127.0.0.1)'),
  config: option.custom('FILE', 'JSON: organizations and their limits, scenarios, platform account\n(see docs/emulator.md, "Config file"); flags win over it', (raw, flag) => {
    if (raw !== undefined) checkInputFile(raw, flag);
    return raw;
  }),
  ...scenarioOption("JSON scenario the streaming endpoint plays for every connection;\n`sample` is the one of the sample call the package ships"),
  log: option.flag('log each request (never a key) on stderr'),
} as const;

async function loading<T>(what: string, load: () => Promise<T>): Promise<T> {
  try {
    return await load();
  } catch (err) {
    throw new InputError('invalid_argument', `cannot use the ${what}: ${(err as Error).message}`, { path: what });
  }
}

async function run({ values }: { readonly values: OptionValues<typeof OPTIONS> }, io: CliIo): Promise<number> {
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
  const emu = await startEmulator(options);
  const parent = exitWithParent(io);
  io.stdout.write(`${emu.envLines().join('\n')}\n`);
  io.stderr.write(`svc-stream: emulator listening on ${emu.baseUrl} (Ctrl-C to stop)\n`);
  await new Promise<void>((resolve) => {
    if (parent.signal.aborted) resolve();
    parent.signal.addEventListener('abort', () => resolve(), { once: true });
  });
  parent.dispose();
  if (parent.signal.reason !== 'signal') io.stderr.write(`svc-stream: emulator stopping: ${String(parent.signal.reason)}\n`);
  // A planned stop, not a crash: live sessions get an `error` event and the going-away close
  // (1012), so their clients reconnect to the next emulator instead of reporting a drop.
  await emu.shutdown();
  return 0;
}

export const emulatorCommand: Command = defineCommand({
  name: 'emulator',
  summary: 'run the local emulator of the service on loopback',
  synopsis: 'svc-stream emulator [--port N] [--host H] [--config FILE] [--scenario FILE|sample] [--log]',
  description: `Run the local emulator of the whole service interface on loopback until interrupted, or until
its parent exits or its stdout is closed. On SIGINT or SIGTERM, live streaming sessions get an
error event and close 1012 (service restart), then the emulator exits. The first five lines
printed on stdout are KEY=value pairs for the environment:

  svc-stream emulator --scenario sample > /tmp/svc-emulator.env &
  sleep 1; export $(cat /tmp/svc-emulator.env)`,
  options: OPTIONS,
  run,
});
