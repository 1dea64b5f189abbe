// `svc-stream job submit|status`: the orchestration API from the command line.
import { lastValueFrom, tap } from 'rxjs';
import { InputError } from '../../errors/index.js';
import { reportUsageError } from '../usage.js';
import { HELP_OPTION, option, optionsHelp, parseOptions, type OptionValues } from '../options.js';
import { AUDIO_OPTIONS, checkAudioInput, prepareUpload, uploadConverts, type PreparedUpload } from '../audioFlags.js';
import { SUBMISSION_EXTENSIONS } from '../../platform/files.js';
import { PlatformClient } from '../../platform/PlatformClient.js';
import type { PollJobOptions } from '../../platform/PlatformClient.js';
import { printError, type CliIo, type Command } from '../command.js';
import { openEndpoint, type ModelsEndpoint } from '../endpoint.js';
import { readPlatformCredentials } from '../../credentials.js';
import { resultSource } from '../../resultSource.js';
import { sourceLine, STAND_IN_LABEL } from '../resultSource.js';

const OPTIONS = {
  wait: option.flag("poll until the status is exactly 'completed'; exit 0 when it\nis. Any other status (even 'failed') is polled until --timeout-ms."),
  emotion: option.flag('ask for emotion annotation (flags.emotion_annotation)'),
  demographics: option.flag('ask for demographics (flags.demographics)'),
  realtime: option.flag('real-time job, no files (cannot be combined with --wait)'),
  'interval-ms': option.integer('N', 'first delay between polls (default 1000; grows 1.5x, capped at 10000)', { min: 1 }),
  'timeout-ms': option.integer('N', 'give up waiting after N ms (default 900000)', { min: 1 }),
  'platform-url': option.text('URL', 'orchestration API base (default SVC_PLATFORM_URL)'),
  ...AUDIO_OPTIONS,
  ...HELP_OPTION,
} as const;

const USAGE = `Usage:
  svc-stream job submit FILE... [--wait] [--emotion] [--demographics]
  svc-stream job submit --realtime [--emotion] [--demographics]
  svc-stream job status JOB_ID [--wait]

Submit a job to the orchestration API (early access) or read its status.
One FILE is a single-file job (at most 5,000,000 bytes); several FILEs are one multi-file
job, uploaded in order and finalized with the last. --realtime submits a
real-time job and prints its realtime_url. Audio files ffmpeg reads that the API does
not take (.m4a …) and headerless raw audio (with --format/--rate/--channels) are
converted to WAV before the upload; --transcode converts any file.

Options:
${optionsHelp(OPTIONS)}

Output: JSON lines on stdout: the submission reply (or the status), then with
--wait one line per status change, the last one 'completed' with the results.
Failures: one line on stderr, exit 1 (2 for usage errors).

Credentials come from SVC_ACCOUNT_UUID and SVC_PLATFORM_API_KEY. With neither
SVC_API_KEY nor SVC_BASE_URL nor the platform variables set, an embedded emulator
is started for the command's lifetime: its jobs exist only while the command runs,
so 'job status' of an earlier job needs a running emulator or the real service.
`;


const sourceSaid = new WeakSet<CliIo>();

/** One JSON line; the first answer the emulator made also gets one line on stderr saying so. */
function writeLine(io: CliIo, value: unknown): void {
  if (typeof value === 'object' && value !== null && resultSource(value) === 'emulator' && !sourceSaid.has(io)) {
    sourceSaid.add(io);
    io.stderr.write(`svc-stream: ${sourceLine(STAND_IN_LABEL)}\n`);
  }
  io.stdout.write(`${JSON.stringify(value)}\n`);
}

interface PlatformEndpoint {
  readonly client: PlatformClient;
  close(): Promise<void>;
}

/** Fully configured (flag or environment): use it; otherwise openEndpoint, which may embed an emulator. */
async function platformEndpoint(platformUrl: string | undefined, io: CliIo): Promise<PlatformEndpoint> {
  const { baseUrl, accountUuid, apiKey } = readPlatformCredentials({ baseUrl: platformUrl }, io.env);
  if (baseUrl && accountUuid && apiKey) return { client: new PlatformClient({ baseUrl, accountUuid, apiKey, env: io.env }), close: async () => undefined };
  const ep: ModelsEndpoint = await openEndpoint({ platformUrl }, io);
  try {
    if (!ep.platformUrl || !ep.accountUuid || !ep.platformApiKey) {
      throw new InputError('invalid_argument', 'the orchestration API is not configured: set SVC_PLATFORM_URL, SVC_ACCOUNT_UUID and SVC_PLATFORM_API_KEY');
    }
    return { client: new PlatformClient({ baseUrl: ep.platformUrl, accountUuid: ep.accountUuid, apiKey: ep.platformApiKey, env: io.env }), close: () => ep.close() };
  } catch (err) {
    await ep.close();
    throw err;
  }
}

async function waitFor(client: PlatformClient, jobId: string, poll: PollJobOptions, io: CliIo): Promise<void> {
  await lastValueFrom(client.pollJob(jobId, poll).pipe(tap((job) => writeLine(io, job))));
}

async function run(argv: readonly string[], io: CliIo): Promise<number> {
  const [sub, ...rest] = argv;
  if (sub === undefined || sub === '--help' || sub === '-h' || sub === 'help') {
    (sub === undefined ? io.stderr : io.stdout).write(USAGE);
    return sub === undefined ? 2 : 0;
  }
  let values: OptionValues<typeof OPTIONS>;
  let positionals: string[];
  let poll: PollJobOptions;
  try {
    if (sub !== 'submit' && sub !== 'status') throw new InputError('invalid_argument', `unknown job subcommand ${JSON.stringify(sub)}; use submit or status (see --help)`);
    ({ values, positionals } = parseOptions(rest, OPTIONS, true));
    if (values.help) {
      io.stdout.write(USAGE);
      return 0;
    }
    if (sub === 'submit') {
      if (values.realtime && positionals.length > 0) throw new InputError('invalid_argument', '--realtime takes no files');
      if (values.realtime && values.wait) throw new InputError('invalid_argument', '--realtime cannot be combined with --wait: a real-time job is driven through its realtime_url');
      if (!values.realtime && positionals.length === 0) throw new InputError('invalid_argument', 'job submit needs at least one FILE, or --realtime');
    } else if (positionals.length !== 1) {
      throw new InputError('invalid_argument', 'job status needs exactly one JOB_ID');
    }
    const intervalMs = values['interval-ms'];
    const deadlineMs = values['timeout-ms'];
    poll = { ...(intervalMs !== undefined ? { intervalMs } : {}), ...(deadlineMs !== undefined ? { deadlineMs } : {}), ...(io.signal ? { signal: io.signal } : {}) };
  } catch (err) {
    return reportUsageError(io.stderr, 'job', USAGE, err);
  }

  // Every FILE checked before anything starts, in the commands' one wording (exit 2).
  if (sub === 'submit') {
    try {
      for (const file of positionals) await checkAudioInput(file, values, uploadConverts(file, values, SUBMISSION_EXTENSIONS));
    } catch (err) {
      printError(io, err);
      return 2;
    }
  }
  const flags = { emotion_annotation: values.emotion === true, demographics: values.demographics === true };
  const signal = io.signal;

  let endpoint: PlatformEndpoint | undefined;
  try {
    endpoint = await platformEndpoint(values['platform-url'], io);
    const { client } = endpoint;
    if (sub === 'status') {
      const jobId = positionals[0]!;
      if (values.wait) await waitFor(client, jobId, poll, io);
      else {
        const job = await client.getJob(jobId, signal ? { signal } : {});
        // Only `completed` is contract: any status read is printed, none is guessed a failure.
        writeLine(io, job);
      }
      return 0;
    }
    if (values.realtime) {
      writeLine(io, await client.submitRealtime({ flags, ...(signal ? { signal } : {}) }));
      return 0;
    }
    const opts = { flags, ...(signal ? { signal } : {}) };
    const uploads: PreparedUpload[] = [];
    let reply;
    try {
      for (const file of positionals) uploads.push(await prepareUpload(file, values, SUBMISSION_EXTENSIONS));
      const paths = uploads.map((u) => u.path);
      reply = paths.length === 1 ? await client.submitFile(paths[0]!, opts) : await client.submitFiles(paths, opts);
    } finally {
      await Promise.all(uploads.map((u) => u.cleanup()));
    }
    writeLine(io, reply);
    if (values.wait) await waitFor(client, reply.job_id, poll, io);
    return 0;
  } catch (err) {
    printError(io, err);
    return err instanceof InputError && err.code === 'invalid_argument' ? 2 : 1;
  } finally {
    await endpoint?.close();
  }
}

/** `svc-stream job`: submit orchestration jobs and read their status. */
export const jobCommand: Command = {
  name: 'job',
  summary: 'submit orchestration API jobs (real-time, one file, several files) and poll their status',
  usage: USAGE,
  run,
};

export const jobCommands: readonly Command[] = [jobCommand];
