// `svc-stream job submit|status`: the orchestration API from the command line.
import { parseArgs } from 'node:util';
import { lastValueFrom, tap } from 'rxjs';
import { InputError } from '../../errors.js';
import { argsErrorMessage, usageHint } from '../usage.js';
import { AUDIO_HELP, AUDIO_OPTIONS, prepareUpload, type PreparedUpload } from '../audioFlags.js';
import { SUBMISSION_EXTENSIONS } from '../../platform/files.js';
import { PlatformClient } from '../../platform/PlatformClient.js';
import type { PollJobOptions } from '../../platform/PlatformClient.js';
import { printError, type CliIo, type Command } from '../command.js';
import { openEndpoint, type ModelsEndpoint } from '../endpoint.js';
import { readPlatformCredentials } from '../../credentials.js';

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
  --wait              poll until the status is exactly 'completed'; exit 0 when it
                      is. Any other status (even 'failed') is polled until --timeout-ms.
  --emotion           ask for emotion annotation (flags.emotion_annotation)
  --demographics      ask for demographics (flags.demographics)
  --realtime          real-time job, no files (cannot be combined with --wait)
  --interval-ms N     first delay between polls (default 1000; grows 1.5x, capped at 10000)
  --timeout-ms N      give up waiting after N ms (default 900000)
  --platform-url URL  orchestration API base (default SVC_PLATFORM_URL)
${AUDIO_HELP}
  -h, --help          this help

Output: JSON lines on stdout: the submission reply (or the status), then with
--wait one line per status change, the last one 'completed' with the results.
Failures: one line on stderr, exit 1 (2 for usage errors).

Credentials come from SVC_ACCOUNT_UUID and SVC_PLATFORM_API_KEY. With neither
SVC_API_KEY nor SVC_BASE_URL nor the platform variables set, an embedded emulator
is started for the command's lifetime: its jobs exist only while the command runs,
so 'job status' of an earlier job needs a running emulator or the real service.
`;

const OPTIONS = {
  wait: { type: 'boolean' },
  realtime: { type: 'boolean' },
  emotion: { type: 'boolean' },
  demographics: { type: 'boolean' },
  'interval-ms': { type: 'string' },
  'timeout-ms': { type: 'string' },
  'platform-url': { type: 'string' },
  ...AUDIO_OPTIONS,
  help: { type: 'boolean', short: 'h' },
} as const;

function positiveInt(value: string | undefined, flag: string): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isInteger(n) || n <= 0) throw new InputError('invalid_argument', `${flag} must be a positive integer, got ${JSON.stringify(value)}`, { path: flag });
  return n;
}

function writeLine(io: CliIo, value: unknown): void {
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
  let values: { [K in keyof typeof OPTIONS]?: (typeof OPTIONS)[K]['type'] extends 'boolean' ? boolean : string };
  let positionals: string[];
  let poll: PollJobOptions;
  try {
    if (sub !== 'submit' && sub !== 'status') throw new InputError('invalid_argument', `unknown job subcommand ${JSON.stringify(sub)}; use submit or status (see --help)`);
    ({ values, positionals } = parseArgs({ args: [...rest], options: OPTIONS, allowPositionals: true, strict: true }));
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
    const intervalMs = positiveInt(values['interval-ms'] as string | undefined, '--interval-ms');
    const deadlineMs = positiveInt(values['timeout-ms'] as string | undefined, '--timeout-ms');
    poll = { ...(intervalMs !== undefined ? { intervalMs } : {}), ...(deadlineMs !== undefined ? { deadlineMs } : {}), ...(io.signal ? { signal: io.signal } : {}) };
  } catch (err) {
    io.stderr.write(`svc-stream: invalid_argument: ${argsErrorMessage(err, USAGE).split('\n')[0]}\n${usageHint('job', USAGE)}\n`);
    return 2;
  }

  const flags = { emotion_annotation: values.emotion === true, demographics: values.demographics === true };
  const signal = io.signal;

  let endpoint: PlatformEndpoint | undefined;
  try {
    endpoint = await platformEndpoint(values['platform-url'] as string | undefined, io);
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
