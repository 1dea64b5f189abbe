// The shape every subcommand of `svc-stream` has, and the I/O it is given (injected so
// tests can run commands in-process).
import { readFileSync } from 'node:fs';
import type { Readable, Writable } from 'node:stream';
import { InputError } from '../errors.js';
import type { SessionConfig } from '../schema/config.js';

export interface CliIo {
  readonly stdout: Writable & { isTTY?: boolean; columns?: number };
  readonly stderr: Writable & { isTTY?: boolean };
  readonly stdin: Readable;
  readonly env: NodeJS.ProcessEnv;
  /** Aborted on SIGINT, SIGTERM or SIGHUP. */
  readonly signal?: AbortSignal | undefined;
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
