// The shape every subcommand of `svc-stream` has, and the I/O it is given (injected so
// tests can run commands in-process).
import { readFileSync } from 'node:fs';
import type { Readable, Writable } from 'node:stream';
import { InputError, SvcError } from '../errors/index.js';
import type { SessionConfig } from '../schema/config.js';
import { isUsageError, reportUsageError } from './usage.js';
import { HELP_OPTION, optionsHelp, parseOptions, type OptionTable, type OptionValues } from './options.js';
import { withLogFormat } from './log.js';

export interface CliIo {
  readonly stdout: Writable & { isTTY?: boolean; columns?: number };
  readonly stderr: Writable & { isTTY?: boolean };
  readonly stdin: Readable;
  readonly env: NodeJS.ProcessEnv;
  /** Aborted on SIGINT, SIGTERM or SIGHUP: a long-running service drains, any other command stops. */
  readonly signal?: AbortSignal | undefined;
  /** Aborted on a second such signal: a draining service ends its calls at once. */
  readonly forceSignal?: AbortSignal | undefined;
}

export interface Command {
  readonly name: string;
  /** One line for `svc-stream --help`. */
  readonly summary: string;
  /** Full `--help` text. */
  readonly usage: string;
  /** Run with the arguments after the command name; resolves to the exit code. */
  run(argv: readonly string[], io: CliIo): Promise<number>;
}

/**
 * The input errors a command reports before it starts anything, as usage mistakes are, in one
 * line: exit status 2. A file refused, a port taken, a flag's optional package not installed.
 */
const INPUT_CODES = new Set(['file_not_found', 'empty_file', 'invalid_config', 'corrupt_audio', 'unsupported_format', 'port_in_use', 'missing_dependency']);

function isInputFileError(err: unknown): boolean {
  return err instanceof SvcError && INPUT_CODES.has(err.code) && (err instanceof InputError || err.code === 'missing_dependency');
}

/** Print an error the CLI way: one line with its code on stderr. */
export function printError(io: CliIo, err: unknown): void {
  const e = err as { code?: string; message?: string };
  const code = typeof e?.code === 'string' ? e.code : 'error';
  const message = e?.message ?? String(err);
  io.stderr.write(`svc-stream: ${code}: ${message.split('\n')[0]}\n`);
}

/** Read a JSON file named by a flag; InputError naming the flag when it cannot be read or parsed. */
export function readJsonFile(path: string, what: string): unknown {
  try {
    return JSON.parse(readFileSync(path, 'utf8'));
  } catch (err) {
    throw new InputError('invalid_argument', `cannot read ${what} ${path}: ${(err as Error).message}`, { path: what });
  }
}

/** The value of `--config FILE|default`: `'default'` when absent or `default`, else the file's JSON (validated by the session). */
export function configFlag(value: string | undefined): SessionConfig {
  return value === undefined || value === 'default' ? 'default' : (readJsonFile(value, 'config') as SessionConfig);
}

/** What {@link defineCommand} builds a command from: its words, its options, and what it does. */
export interface CommandDefinition<S extends OptionTable> {
  readonly name: string;
  /** One line for `svc-stream --help`. */
  readonly summary: string;
  /** What follows `Usage: ` (`svc-stream analyze [FILE|-] [options]`). */
  readonly synopsis: string;
  /** The paragraphs between the usage line and the options. */
  readonly description: string;
  /** The options; `-h, --help` is added. */
  readonly options: S;
  /** The paragraphs after the options (environment, exit status). */
  readonly footer?: string | undefined;
  /** Whether the command takes positional arguments (FILE…). */
  readonly positionals?: boolean | undefined;
  /** Whether everything after a first `--` is kept, unparsed, as `rest` (a command to run). */
  readonly rest?: boolean | undefined;
  /** Run with the parsed options (every value already read and checked). */
  run(args: { readonly values: OptionValues<S>; readonly positionals: string[]; readonly rest: readonly string[] }, io: CliIo): Promise<number>;
}

/**
 * A command whose options are parsed by the one parser (src/cli/options.ts): its `--help`
 * text is built from its table, `--help` is answered before anything else, and a usage
 * mistake or a refused value throws before `run` starts anything.
 */
export function defineCommand<S extends OptionTable>(def: CommandDefinition<S>): Command {
  const options = { ...def.options, ...HELP_OPTION };
  const usage = [`Usage: ${def.synopsis}`, def.description.trim(), `Options:\n${optionsHelp(options)}`, ...(def.footer ? [def.footer.trim()] : [])].join('\n\n');
  return {
    name: def.name,
    summary: def.summary,
    usage,
    async run(argv, given) {
      let io = given;
      try {
        const cut = def.rest ? argv.indexOf('--') : -1;
        const own = cut < 0 ? argv : argv.slice(0, cut);
        const rest = cut < 0 ? [] : argv.slice(cut + 1);
        const { values, positionals } = parseOptions(own, options, def.positionals === true);
        if (values.help) {
          io.stdout.write(`${usage}\n`);
          return 0;
        }
        // `--log-format json`: every line on stderr from here on is one JSON record.
        const format = (values as Record<string, unknown>)['log-format'];
        if (format === 'json') io = withLogFormat(io, format, def.name);
        return await def.run({ values: values as OptionValues<S>, positionals, rest }, io);
      } catch (err) {
        if (isUsageError(err)) return reportUsageError(io.stderr, def.name, usage, err);
        if (isInputFileError(err)) {
          printError(io, err);
          return 2;
        }
        throw err;
      }
    },
  };
}

/** Resolves when `signal` aborts (never without one): a long-running command's Ctrl-C. */
export function aborted(signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) resolve();
    signal?.addEventListener('abort', () => resolve(), { once: true });
  });
}
