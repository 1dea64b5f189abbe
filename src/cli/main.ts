// The `svc-stream` command: dispatches to one subcommand per file in ./commands.
import { readFileSync } from 'node:fs';
import { printError, type CliIo, type Command } from './command.js';
import { analyzeCommand } from './commands/analyze.js';
import { audioHookCommand } from './commands/audioHook.js';
import { batchCommands } from './commands/batch.js';
import { dashboardCommands } from './commands/dashboard.js';
import { emulatorCommand } from './commands/emulator.js';
import { jobCommands } from './commands/job.js';
import { mediaStreamCommand } from './commands/mediaStream.js';
import { queueCommand } from './commands/queue.js';
import { relayCommands } from './commands/relay.js';
import { rtpCommands } from './commands/rtp.js';
import { sipCommand } from './commands/sip.js';
import { isUsageError, reportUsageError, suggestOption } from './usage.js';

export const COMMANDS: readonly Command[] = [analyzeCommand, ...dashboardCommands, ...relayCommands, ...batchCommands, ...jobCommands, queueCommand, ...rtpCommands, sipCommand, mediaStreamCommand, audioHookCommand, emulatorCommand];

function version(): string {
  try {
    const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version?: string };
    return pkg.version ?? 'unknown';
  } catch {
    return 'unknown';
  }
}

function help(): string {
  const width = Math.max(...COMMANDS.map((c) => c.name.length));
  return [
    'Usage: svc-stream <command> [options]',
    '',
    'Commands:',
    ...COMMANDS.map((c) => `  ${c.name.padEnd(width)}  ${c.summary}`),
    '',
    "Run 'svc-stream <command> --help' for a command's options.",
    'Environment: SVC_API_KEY, SVC_BASE_URL, SVC_PLATFORM_URL, SVC_ACCOUNT_UUID, SVC_PLATFORM_API_KEY, SVC_REDIS_URL.',
    'With no SVC_API_KEY or SVC_BASE_URL, commands run against an embedded local emulator.',
  ].join('\n');
}

/** Run the CLI with `argv` (without node and script); resolves to the exit code. */
export async function main(argv: readonly string[], io: CliIo): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined || name === '-h' || name === '--help' || name === 'help') {
    io.stdout.write(`${help()}\n`);
    return name === undefined ? 2 : 0;
  }
  if (name === '--version' || name === '-v') {
    io.stdout.write(`${version()}\n`);
    return 0;
  }
  const command = COMMANDS.find((c) => c.name === name);
  if (!command) {
    const suggestion = COMMANDS.map((c) => c.name).find((n) => suggestOption(`--${name}`, [`--${n}`]) !== undefined);
    io.stderr.write(`svc-stream: unknown command '${name}'${suggestion ? ` (did you mean '${suggestion}'?)` : ''}\n${help()}\n`);
    return 2;
  }
  try {
    return await command.run(rest, io);
  } catch (err) {
    if (isUsageError(err)) return reportUsageError(io.stderr, command.name, command.usage, err);
    printError(io, err);
    return 1;
  }
}
