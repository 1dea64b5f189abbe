// `svc-stream events|emotion|presets`: batch calls from the command line. Results are JSON
// lines on stdout; progress (on a TTY) and the failure summary go to stderr.
import { parseArgs } from 'node:util';
import { defer, finalize, from, switchMap, type Observable } from 'rxjs';
import { detectAudioEvents, detectEmotion, listPresetsAsync } from '../../batch/calls.js';
import { batchFiles, type FileOutcome } from '../../batch/batchFiles.js';
import type { BatchOptions } from '../../batch/request.js';
import { MAX_BATCH_CONCURRENCY } from '../../schema/limits.js';
import { InputError } from '../../errors.js';
import { describeByteLimit, MAX_UPLOAD_BYTES } from '../../schema/limits.js';
import { printError, type CliIo, type Command } from '../command.js';
import { openEndpoint, type ModelsEndpoint } from '../endpoint.js';
import { argsErrorMessage, usageHint } from '../usage.js';
import { AUDIO_HELP, AUDIO_OPTIONS, prepareUpload } from '../audioFlags.js';
import { BATCH_FILE_EXTENSIONS } from '../../batch/files.js';
import { fleetLimits, REDIS_HELP, REDIS_OPTION } from '../redisFlag.js';

const COMMON_OPTIONS = {
  'base-url': { type: 'string' },
  'api-key': { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const;

const ENDPOINT_HELP = `  --base-url URL      models API base (default SVC_BASE_URL)
  --api-key KEY       models API key (default SVC_API_KEY)
                      (with neither set, an embedded emulator is started)
  -h, --help          this help`;

function filesUsage(name: string, what: string): string {
  return `Usage: svc-stream ${name} [options] FILE...

${what} for each FILE (.aac .aiff .flac .mp3 .mp4 .mov .ogg .opus .wav .webm, at most ${describeByteLimit(MAX_UPLOAD_BYTES)}).
Other audio files ffmpeg reads (.m4a …) and headerless raw audio (with --format/--rate/--channels)
are converted to WAV with ffmpeg before the upload; --transcode converts any file.
Prints one JSON line per file on stdout: {"path":…,"result":…} or
{"path":…,"error":{"code":…,"status":…,"detail":…,"message":…},"skipped":false}.
A progress line goes to stderr when it is a terminal; a summary of failures by code at the end.
Exit status: 0 when every file succeeded, 1 when any failed, 2 on a usage error.

Options:
${AUDIO_HELP}
  --concurrency N     requests in flight at once for this model (1-${MAX_BATCH_CONCURRENCY}, default 3)
  --fail-fast         stop at the first failed file
${REDIS_HELP}
                      (--concurrency is then the fleet's limit for the model)
${ENDPOINT_HELP}`;
}

function outcomeLine(o: FileOutcome<unknown>): string {
  if ('result' in o) return JSON.stringify({ path: o.path, result: o.result });
  const e = o.error;
  return JSON.stringify({ path: o.path, error: { code: e.code, status: e.status, detail: e.detail, message: e.message }, skipped: o.skipped });
}

function usageError(io: CliIo, message: string, name: string): number {
  const usage = name === 'presets' ? presetsUsage : filesUsage(name, '');
  io.stderr.write(`svc-stream: invalid_argument: ${message}\n${usageHint(name, usage)}\n`);
  return 2;
}

/** The endpoint from flags and environment; undefined (after printing why) when it cannot be had. */
async function endpointOrUsage(values: { 'base-url'?: string | undefined; 'api-key'?: string | undefined }, io: CliIo): Promise<ModelsEndpoint | undefined> {
  try {
    return await openEndpoint({ baseUrl: values['base-url'], apiKey: values['api-key'] }, io);
  } catch (err) {
    printError(io, err);
    return undefined;
  }
}

function filesCommand(name: string, summary: string, what: string, call: (path: string, o: BatchOptions) => Observable<unknown>): Command {
  const usage = filesUsage(name, what);
  return {
    name,
    summary,
    usage,
    async run(argv, io) {
      let parsed;
      try {
        parsed = parseArgs({
          args: [...argv],
          options: { ...COMMON_OPTIONS, ...REDIS_OPTION, ...AUDIO_OPTIONS, concurrency: { type: 'string' }, 'fail-fast': { type: 'boolean' } },
          allowPositionals: true,
          strict: true,
        });
      } catch (err) {
        return usageError(io, argsErrorMessage(err, usage), name);
      }
      const { values, positionals } = parsed;
      if (values.help) {
        io.stdout.write(`${usage}\n`);
        return 0;
      }
      if (positionals.length === 0) return usageError(io, 'no FILE given', name);
      let concurrency: number | undefined;
      if (values.concurrency !== undefined) {
        concurrency = Number(values.concurrency);
        if (!/^\d+$/.test(values.concurrency) || concurrency < 1 || concurrency > MAX_BATCH_CONCURRENCY) {
          return usageError(io, `--concurrency must be an integer from 1 to ${MAX_BATCH_CONCURRENCY}, got ${values.concurrency}`, name);
        }
      }

      const endpoint = await endpointOrUsage(values, io);
      if (endpoint === undefined) return 2;
      let fleet;
      try {
        fleet = await fleetLimits(values.redis, io.env, concurrency);
      } catch (err) {
        await endpoint.close();
        printError(io, err);
        return err instanceof InputError ? 2 : 1;
      }
      const total = positionals.length;
      let done = 0;
      let failed = 0;
      const byCode = new Map<string, number>();
      const progress = (): void => {
        if (io.stderr.isTTY) io.stderr.write(`\r[${done}/${total}] ${done - failed} ok, ${failed} failed`);
      };
      try {
        progress();
        await new Promise<void>((resolve, reject) => {
          from(positionals)
            .pipe(
              // A file the service would not take (raw, .m4a, --transcode) is uploaded as a WAV
              // made by ffmpeg; its line still names the file given.
              batchFiles((path: string, o: BatchOptions) =>
                defer(() => prepareUpload(path, values, BATCH_FILE_EXTENSIONS)).pipe(
                  switchMap((upload) => call(upload.path, o).pipe(finalize(() => void upload.cleanup()))),
                ), {
                baseUrl: endpoint.baseUrl,
                apiKey: endpoint.apiKey,
                concurrency,
                limiter: fleet.limiter,
                failFast: values['fail-fast'] ?? false,
                signal: io.signal,
              }),
            )
            .subscribe({
              next: (o) => {
                done++;
                if (!('result' in o)) {
                  failed++;
                  const code = o.skipped ? `skipped (${o.error.code})` : o.error.code;
                  byCode.set(code, (byCode.get(code) ?? 0) + 1);
                }
                io.stdout.write(`${outcomeLine(o)}\n`);
                progress();
              },
              error: reject,
              complete: resolve,
            });
        });
      } catch (err) {
        if (io.stderr.isTTY) io.stderr.write('\n');
        // With --fail-fast the failure was printed as a line; say why the run ended.
        printError(io, err);
        return 1;
      } finally {
        await fleet.close();
        await endpoint.close();
      }
      if (io.stderr.isTTY) io.stderr.write('\n');
      if (failed > 0) {
        const parts = [...byCode.entries()].sort((a, b) => b[1] - a[1]).map(([code, n]) => `${code}: ${n}`);
        io.stderr.write(`svc-stream ${name}: ${failed} of ${total} failed (${parts.join(', ')})\n`);
        return 1;
      }
      return 0;
    },
  };
}

const presetsUsage = `Usage: svc-stream presets [options]

Lists the behavior presets a config can reference as "preset:<identifier>", one JSON line each.
Consumes no usage.

Options:
  --from batch|streaming  Which catalogue path to ask (default batch)
${ENDPOINT_HELP}`;

const presetsCommand: Command = {
  name: 'presets',
  summary: 'list the behavior presets (preset:<identifier>)',
  usage: presetsUsage,
  async run(argv, io) {
    let parsed;
    try {
      parsed = parseArgs({ args: [...argv], options: { ...COMMON_OPTIONS, from: { type: 'string' } }, allowPositionals: false, strict: true });
    } catch (err) {
      return usageError(io, argsErrorMessage(err, presetsUsage), 'presets');
    }
    const { values } = parsed;
    if (values.help) {
      io.stdout.write(`${presetsUsage}\n`);
      return 0;
    }
    if (values.from !== undefined && values.from !== 'batch' && values.from !== 'streaming') {
      return usageError(io, `--from must be batch or streaming, got ${values.from}`, 'presets');
    }
    const endpoint = await endpointOrUsage(values, io);
    if (endpoint === undefined) return 2;
    try {
      const presets = await listPresetsAsync({ baseUrl: endpoint.baseUrl, apiKey: endpoint.apiKey, from: values.from as 'batch' | 'streaming' | undefined, signal: io.signal });
      for (const p of presets) io.stdout.write(`${JSON.stringify(p)}\n`);
      return 0;
    } catch (err) {
      printError(io, err);
      return err instanceof InputError ? 2 : 1;
    } finally {
      await endpoint.close();
    }
  },
};

export const batchCommands: readonly Command[] = [
  filesCommand('events', 'detect audio events (applause, laughter, instruments…) in files', 'Detects non-speech audio events', detectAudioEvents),
  filesCommand('emotion', 'detect the emotion of files, whole-file and per 15 s window', 'Detects the whole-file emotion and one per 15 s window', detectEmotion),
  presetsCommand,
];
