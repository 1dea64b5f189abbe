// What a command says on stderr, in one of two formats: the human lines (`svc-stream: …`, the
// default) or `--log-format json`, one JSON object a line (level, time, command, worker, call or
// session id, code, message), for a log pipeline.
import { Writable } from 'node:stream';
import { ERROR_CODES } from '../errors/codes.js';
import type { CliIo } from './command.js';
import { option } from './options.js';

/** `--log-format text|json`, for every long-running command. */
export const LOG_FORMAT_OPTION = {
  'log-format': option.choice('F', ['text', 'json'], 'stderr as human lines (text, the default) or one JSON object a line (json:\nlevel, time, command, worker, call, session, code, message)', 'text'),
} as const;

/** The fields a line may carry beyond its message. */
export interface LogFields {
  readonly level?: 'info' | 'warn' | 'error' | undefined;
  readonly code?: string | undefined;
  readonly call?: string | undefined;
  readonly session?: string | undefined;
  readonly [key: string]: unknown;
}

const CODES = new Set<string>(ERROR_CODES);
const WARNING_CODES = new Set(['max_legs', 'max_connections', 'draining', 'unmapped_payload_type', 'inferred_payload_type']);

/** The worker's place when this process is one of a `--workers` command's (its lines say so). */
function workerIndex(env: NodeJS.ProcessEnv): number | undefined {
  const w = env['SVC_STREAM_WORKER'];
  return w === undefined ? undefined : Number(w);
}

/**
 * One human line of the CLI as a JSON log record: `svc-stream: CODE: message` is an error with
 * its code, `svc-stream: warning: message` a warning, anything else information. A call's or a
 * session's id at the start of the message (`rtp-…`, `session ID …`) is lifted into its field.
 */
export function logRecord(line: string, command: string, worker: number | undefined, fields: LogFields = {}): Record<string, unknown> {
  let message = line.replace(/^svc-stream: /, '');
  let level: 'info' | 'warn' | 'error' = fields.level ?? 'info';
  let code = fields.code;
  const coded = /^([a-z][a-z_]+): (.*)$/s.exec(message);
  if (coded && CODES.has(coded[1]!)) {
    code ??= coded[1];
    message = coded[2]!;
    level = fields.level ?? 'error';
  } else if (message.startsWith('warning: ')) {
    message = message.slice('warning: '.length);
    level = fields.level ?? 'warn';
  }
  if (code !== undefined && WARNING_CODES.has(code) && fields.level === undefined) level = 'warn';
  const call = fields.call ?? /^(?:call )?(rtp-[0-9a-f]{8}|MZ[0-9a-f]{32}(?::\w+)?)\b/.exec(message)?.[1];
  const session = fields.session ?? /^session (\S+)/.exec(message)?.[1];
  const { level: _l, code: _c, call: _k, session: _s, ...rest } = fields;
  return {
    level,
    time: new Date().toISOString(),
    command,
    ...(worker !== undefined ? { worker } : {}),
    ...(call !== undefined ? { call } : {}),
    ...(session !== undefined ? { session } : {}),
    ...(code !== undefined ? { code } : {}),
    message,
    ...rest,
  };
}

/** A stderr that turns each line written to it into one JSON record on `stderr`. */
function jsonStderr(stderr: CliIo['stderr'], command: string, worker: number | undefined): CliIo['stderr'] {
  let partial = '';
  const w = new Writable({
    write(chunk: Buffer | string, _enc, done) {
      partial += String(chunk);
      let nl: number;
      while ((nl = partial.indexOf('\n')) >= 0) {
        const line = partial.slice(0, nl);
        partial = partial.slice(nl + 1);
        if (line.trim() !== '') stderr.write(`${JSON.stringify(logRecord(line, command, worker))}\n`);
      }
      done();
    },
    final(done) {
      if (partial.trim() !== '') stderr.write(`${JSON.stringify(logRecord(partial, command, worker))}\n`);
      done();
    },
  });
  return w;
}

/** The command's I/O with stderr in `format`: unchanged for `text`, one JSON record a line for `json`. */
export function withLogFormat(io: CliIo, format: 'text' | 'json' | undefined, command: string): CliIo {
  if (format !== 'json') return io;
  return { ...io, stderr: jsonStderr(io.stderr, command, workerIndex(io.env)) };
}
