// `svc-stream events|emotion|presets`: batch calls from the command line. Results are JSON
// lines on stdout; progress (on a TTY) and the failure summary go to stderr.
import { defer, finalize, from, switchMap, type Observable } from 'rxjs';
import { detectAudioEvents, detectEmotion, listPresetsAsync } from '../../batch/calls.js';
import { batchFiles, type FileOutcome } from '../../batch/batchFiles.js';
import type { BatchOptions } from '../../batch/request.js';
import { MAX_BATCH_CONCURRENCY } from '../../schema/limits.js';
import { InputError } from '../../errors/index.js';
import { describeByteLimit, MAX_UPLOAD_BYTES } from '../../schema/limits.js';
import { defineCommand, printError, type CliIo, type Command } from '../command.js';
import { openEndpoint, type ModelsEndpoint } from '../endpoint.js';
import { option } from '../options.js';
import { AUDIO_OPTIONS, checkAudioInput, prepareUpload, uploadConverts } from '../audioFlags.js';
import { checkFleetPackages } from '../optionalFlags.js';
import { BATCH_FILE_EXTENSIONS } from '../../batch/files.js';
import { fleetLimits, REDIS_OPTION } from '../redisFlag.js';
import { resultLabel, resultSource } from '../../resultSource.js';
import { SERVICE_LABEL } from '../../schema/resultLabel.js';
import { sourceLine, STAND_IN_LABEL } from '../resultSource.js';

const ENDPOINT_OPTIONS = {
  'base-url': option.text('URL', 'models API base (default SVC_BASE_URL)'),
  'api-key': option.text('KEY', 'models API key (default SVC_API_KEY)\n(with neither set, an embedded emulator is started)'),
} as const;

const FILES_OPTIONS = {
  ...AUDIO_OPTIONS,
  concurrency: option.integer('N', `requests in flight at once for this model (1-${MAX_BATCH_CONCURRENCY}, default 3)`, { min: 1, max: MAX_BATCH_CONCURRENCY }),
  'fail-fast': option.flag('stop at the first failed file'),
  redis: option.text('URL', `${REDIS_OPTION.redis.help}\n(--concurrency is then the fleet's limit for the model)`),
  ...ENDPOINT_OPTIONS,
} as const;

function filesDescription(what: string): string {
  return `${what} for each FILE (.aac .aiff .flac .mp3 .mp4 .mov .ogg .opus .wav .webm, at most ${describeByteLimit(MAX_UPLOAD_BYTES)}).
Other audio files ffmpeg reads (.m4a …) and headerless raw audio (with --format/--rate/--channels)
are converted to WAV with ffmpeg before the upload; --transcode converts any file.
Prints one JSON line per file on stdout: {"path":…,"source":…,"result":…} or
{"path":…,"error":{"code":…,"status":…,"detail":…,"message":…},"skipped":false}.
A progress line goes to stderr when it is a terminal; a summary of failures by code at the end.
Exit status: 0 when every file succeeded, 1 when any failed, 2 on a usage error.`;
}

function outcomeLine(o: FileOutcome<unknown>): string {
  // What made the result, as the answer said (the emulator marks its own, with what its stand-ins heard).
  if ('result' in o) {
    const label = typeof o.result === 'object' && o.result !== null ? resultLabel(o.result) : SERVICE_LABEL;
    return JSON.stringify({ path: o.path, source: label.source, label, result: o.result });
  }
  const e = o.error;
  return JSON.stringify({ path: o.path, error: { code: e.code, status: e.status, detail: e.detail, message: e.message }, skipped: o.skipped });
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
  return defineCommand({
    name,
    summary,
    synopsis: `svc-stream ${name} [options] FILE...`,
    description: filesDescription(what),
    options: FILES_OPTIONS,
    positionals: true,
    async run({ values, positionals }, io) {
      if (positionals.length === 0) throw new InputError('invalid_argument', 'no FILE given', { path: 'FILE' });
      const concurrency = values.concurrency;
      // Every FILE checked before anything starts (no emulator): exists, not empty, audio.
      for (const file of positionals) await checkAudioInput(file, values, uploadConverts(file, values, BATCH_FILE_EXTENSIONS));
      await checkFleetPackages({ redis: values.redis }, io.env);
      const endpoint = await endpointOrUsage(values, io);
      if (endpoint === undefined) return 2;
      let sourceSaid = false;
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
                // People read stderr (stdout is JSON lines): say once that the results are the emulator's.
                if (!sourceSaid && 'result' in o && typeof o.result === 'object' && o.result !== null && resultSource(o.result) === 'emulator') {
                  sourceSaid = true;
                  io.stderr.write(`${io.stderr.isTTY ? '\r\x1b[K' : ''}svc-stream: ${sourceLine(STAND_IN_LABEL)}\n`);
                }
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
  });
}

const presetsCommand: Command = defineCommand({
  name: 'presets',
  summary: 'list the behavior presets (preset:<identifier>)',
  synopsis: 'svc-stream presets [options]',
  description: `Lists the behavior presets a config can reference as "preset:<identifier>", one JSON line each.
Consumes no usage.`,
  options: {
    from: option.choice('batch|streaming', ['batch', 'streaming'], 'Which catalogue path to ask (default batch)', 'batch'),
    ...ENDPOINT_OPTIONS,
  },
  async run({ values }, io) {
    const endpoint = await endpointOrUsage(values, io);
    if (endpoint === undefined) return 2;
    if (endpoint.emulator) io.stderr.write("svc-stream: source: the emulator's copy of the preset catalogue\n");
    try {
      const presets = await listPresetsAsync({ baseUrl: endpoint.baseUrl, apiKey: endpoint.apiKey, from: values.from, signal: io.signal });
      for (const p of presets) io.stdout.write(`${JSON.stringify(p)}\n`);
      return 0;
    } catch (err) {
      printError(io, err);
      return err instanceof InputError ? 2 : 1;
    } finally {
      await endpoint.close();
    }
  },
});

export const batchCommands: readonly Command[] = [
  filesCommand('events', 'detect audio events (applause, laughter, instruments…) in files', 'Detects non-speech audio events', detectAudioEvents),
  filesCommand('emotion', 'detect the emotion of files, whole-file and per 15 s window', 'Detects the whole-file emotion and one per 15 s window', detectEmotion),
  presetsCommand,
];
