// `svc-stream queue add|work|results|status`: a batch run spread over machines through a
// BullMQ queue in Redis. The fleet code (and BullMQ, ioredis) loads only when this runs.
import { resolve } from 'node:path';
import { MAX_BATCH_CONCURRENCY } from '../../schema/limits.js';
import { InputError } from '../../errors/index.js';
import { printError, type CliIo, type Command } from '../command.js';
import { openEndpoint } from '../endpoint.js';
import { HELP_OPTION, option, optionsHelp, parseOptions } from '../options.js';
import { reportUsageError } from '../usage.js';
import { checkAudioInput, uploadConverts } from '../audioFlags.js';
import { checkQueuePackages } from '../optionalFlags.js';
import { BATCH_FILE_EXTENSIONS } from '../../batch/files.js';

const OPTIONS = {
  redis: option.text('URL', "the fleet's Redis (default SVC_REDIS_URL, then redis://127.0.0.1:6379)"),
  queue: option.text('NAME', 'queue name (default svc-stream-batch)'),
  model: option.text('M', 'audio-event (default) or emotion (add)'),
  concurrency: option.integer('N', 'jobs this worker runs at once (default: --org-concurrency)', { min: 1, max: 1000 }),
  'org-concurrency': option.integer('N', `the organization's concurrent requests per model, fleet-wide (1-${MAX_BATCH_CONCURRENCY}, default 3)`, { min: 1, max: MAX_BATCH_CONCURRENCY }),
  'until-empty': option.flag('exit once no job is waiting or running (work)'),
  json: option.flag('results as NDJSON (the default; kept for symmetry with other commands)'),
  'base-url': option.text('URL', 'models API base for work (default SVC_BASE_URL)'),
  'api-key': option.text('KEY', 'models API key for work (default SVC_API_KEY)'),
  ...HELP_OPTION,
} as const;

const USAGE = `Usage: svc-stream queue <add|work|results|status> --redis URL [options]

A batch run shared by many machines: files go into a queue in Redis, workers on any machine
take them, call the batch endpoint under the organization's concurrency limit (shared by the
whole fleet through the same Redis), and store each result or typed error.

  queue add [--model audio-event|emotion] FILE...
                      enqueue one job per FILE (a path or file:// URL every worker can read)
  queue work [--concurrency N] [--org-concurrency N] [--until-empty]
                      take jobs until Ctrl-C (or until none is left); progress on a terminal
  queue results [--json]
                      one NDJSON line per file: {"file","status","result"|"error"}
  queue status        the counts: waiting, active, delayed, completed, failed

Options:
${optionsHelp(OPTIONS)}

Exit status: 0 on success (work: also when some files failed, see results); 1 when Redis
cannot be reached; 2 on a usage error.`;

function usageError(io: CliIo, message: string): number {
  return reportUsageError(io.stderr, 'queue', USAGE, new InputError('invalid_argument', message));
}

function duration(seconds: number | undefined): string {
  if (seconds === undefined || !Number.isFinite(seconds)) return '--';
  const s = Math.round(seconds);
  return s >= 60 ? `${Math.floor(s / 60)}m${String(s % 60).padStart(2, '0')}s` : `${s}s`;
}

async function run(argv: readonly string[], io: CliIo): Promise<number> {
  let parsed;
  try {
    parsed = parseOptions(argv, OPTIONS, true);
  } catch (err) {
    return reportUsageError(io.stderr, 'queue', USAGE, err);
  }
  const { values, positionals } = parsed;
  const [sub, ...rest] = positionals;
  if (values.help || sub === undefined) {
    io.stdout.write(`${USAGE}\n`);
    return values.help ? 0 : 2;
  }
  // Before anything starts: the packages the queue needs, and the files `add` is given.
  try {
    await checkQueuePackages(sub === 'work');
    if (sub === 'add') for (const f of rest) if (!/^file:\/\//i.test(f)) await checkAudioInput(f, {}, uploadConverts(f, {}, BATCH_FILE_EXTENSIONS));
  } catch (err) {
    printError(io, err);
    return 2;
  }
  const fleet = await import('../../fleet/batchQueue.js');
  const { QUEUE_MODELS } = await import('../../fleet/batchJobs.js');
  const { runBatchWorker } = await import('../../fleet/batchWorker.js');
  const { resolveRedisUrl } = await import('../../fleet/redisLimiter.js');
  let url: string;
  const concurrency = values.concurrency;
  const orgConcurrency = values['org-concurrency'];
  try {
    url = resolveRedisUrl(values.redis, io.env);
  } catch (err) {
    return usageError(io, (err as Error).message);
  }
  const base = { url, ...(values.queue ? { name: values.queue } : {}) };

  try {
    if (sub === 'add') {
      if (rest.length === 0) return usageError(io, 'queue add needs FILE...');
      const model = (values.model ?? 'audio-event') as (typeof QUEUE_MODELS)[number];
      if (!QUEUE_MODELS.includes(model)) return usageError(io, `--model must be one of ${QUEUE_MODELS.join(', ')}, got ${values.model}`);
      const queue = await fleet.createBatchQueue(base);
      try {
        // Absolute paths, so a worker started elsewhere on a shared mount finds them.
        const n = await queue.add(rest.map((f) => (/^file:\/\//i.test(f) ? f : resolve(f))), { model });
        io.stderr.write(`svc-stream queue: added ${n} file(s) to ${queue.name}\n`);
      } finally {
        await queue.close();
      }
      return 0;
    }
    if (sub === 'status') {
      const queue = await fleet.createBatchQueue(base);
      try {
        io.stdout.write(`${JSON.stringify(await queue.counts())}\n`);
      } finally {
        await queue.close();
      }
      return 0;
    }
    if (sub === 'results') {
      const queue = await fleet.createBatchQueue(base);
      try {
        for await (const o of queue.results()) io.stdout.write(`${JSON.stringify(o)}\n`);
      } finally {
        await queue.close();
      }
      return 0;
    }
    if (sub === 'work') {
      const endpoint = await openEndpoint({ baseUrl: values['base-url'], apiKey: values['api-key'] }, io);
      const tty = io.stderr.isTTY === true;
      try {
        const summary = await runBatchWorker({
          ...base,
          baseUrl: endpoint.baseUrl,
          apiKey: endpoint.apiKey,
          concurrency,
          organizationConcurrency: orgConcurrency,
          untilEmpty: values['until-empty'] ?? false,
          signal: io.signal,
          onProgress: (p) => {
            if (!tty) return;
            const c = p.counts;
            io.stderr.write(
              `\r\x1b[K[${c.completed + c.failed}/${c.completed + c.failed + c.waiting + c.active + c.delayed}] ${c.active} active, ${c.waiting} waiting, ${c.failed} failed · here ${p.done} ok ${p.failed} failed · ${p.rate.toFixed(2)} files/s · ETA ${duration(p.etaSeconds)}`,
            );
          },
        });
        if (tty) io.stderr.write('\n');
        io.stderr.write(`svc-stream queue: this worker finished ${summary.done} file(s), ${summary.failed} failed\n`);
      } finally {
        await endpoint.close();
      }
      return 0;
    }
    return usageError(io, `unknown subcommand '${sub}' (add, work, results, status)`);
  } catch (err) {
    if (io.stderr.isTTY) io.stderr.write('\n');
    printError(io, err);
    return err instanceof InputError ? 2 : 1;
  }
}

export const queueCommand: Command = {
  name: 'queue',
  summary: 'a batch run shared by many machines through Redis (add, work, results, status)',
  usage: USAGE,
  run,
};
