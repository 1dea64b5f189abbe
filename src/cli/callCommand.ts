// What `rtp`, `media-stream` and `audiohook` share around their calls: where the sessions go
// (the embedded emulator when nothing is configured), the fleet's limits and publisher, the
// `source:` line (each call's label), each call shown until --exit-after or Ctrl-C (in one process or across
// workers), and everything closed at the end. Each command brings its source and its view.
import type { Observable } from 'rxjs';
import { createAnalyzeCallsStats, type AnalyzableCall, type AnalyzeCallsOptions, type AnalyzeCallsStats, type CallAnalysis } from '../telephony/analyzeCalls.js';
import type { CallWorker } from '../telephony/callWorkers.js';
import type { SessionConfig } from '../schema/config.js';
import { labelLines, showCalls, type CallViewOptions } from './callView.js';
import { inCallWorker, showCallsOnWorkers, workersSummary } from './callWorkersView.js';
import { printError, type CliIo } from './command.js';
import { openEndpoint } from './endpoint.js';
import { commandPublisher } from './publishFlag.js';
import { fleetLimits } from './redisFlag.js';
import { embeddedLabel } from './resultSource.js';

/** The flags every call command has, read. */
export interface CallCommandSettings {
  readonly baseUrl: string | undefined;
  readonly redis: string | undefined;
  readonly publish: string | undefined;
  readonly json: boolean;
  readonly config: SessionConfig | undefined;
  readonly maxCalls: number;
  readonly whenFull: 'queue' | 'reject';
  readonly workers: number;
  readonly exitAfter: number | undefined;
  /** What the embedded emulator plays (its label names the file it came from). */
  readonly scenario: unknown;
  /** Across workers, the totals line: the source's counters by its `reportStats` name. */
  readonly totals: { readonly source: string; readonly keys: readonly string[] };
}

/** The flags every call command has, as its options read them. */
export interface CallCommandFlags {
  readonly 'base-url'?: string | undefined;
  readonly redis?: string | undefined;
  readonly publish?: string | undefined;
  readonly json?: boolean | undefined;
  readonly config?: SessionConfig | undefined;
  readonly 'max-calls': number;
  readonly 'when-full': 'queue' | 'reject';
  readonly workers: number;
}

/** The settings of a call command from its flags and what the command decided itself. */
export function callCommandSettings(values: CallCommandFlags, own: Pick<CallCommandSettings, 'exitAfter' | 'scenario' | 'totals'>): CallCommandSettings {
  return {
    baseUrl: values['base-url'],
    redis: values.redis,
    publish: values.publish,
    json: values.json === true,
    config: values.config,
    maxCalls: values['max-calls'],
    whenFull: values['when-full'],
    workers: values.workers,
    ...own,
  };
}

/** What a command's calls and view are given. */
export interface CallCommandRun {
  readonly json: boolean;
  /** The counters over every call of this process. */
  readonly callStats: AnalyzeCallsStats;
  /** A line on stdout. */
  out(line: string): void;
  /** analyzeCalls' options from the command's flags (sessions, limits, publishing, where results come from). */
  analyze<C extends AnalyzableCall>(worker?: CallWorker): AnalyzeCallsOptions<C>;
}

/** One call's start line and end counters, in the command's words. */
export type CallCommandView<C extends AnalyzableCall> = (call: CallAnalysis<C>) => Pick<CallViewOptions, 'started' | 'counters'>;

/**
 * Run a call command: `calls` makes the analysed calls (with `fail` for a failure of the
 * command's own, such as its demo), `view` says how each is shown. Resolves with the exit code.
 */
export async function runCallCommand<C extends AnalyzableCall>(
  io: CliIo,
  settings: CallCommandSettings,
  calls: (run: CallCommandRun, fail: (err: unknown) => void, worker?: CallWorker) => Observable<CallAnalysis<C>>,
  view: CallCommandView<C>,
): Promise<number> {
  const { json, scenario } = settings;
  const onWorkers = settings.workers > 1 || inCallWorker();
  const endpoint = await openEndpoint({ baseUrl: settings.baseUrl }, io, scenario !== undefined ? { scenario: scenario as never } : {});
  const fleet = await fleetLimits(settings.redis, io.env);
  const published = await commandPublisher(settings.publish, io);
  const out = (line: string): void => void io.stdout.write(`${line}\n`);
  // What made the results, as analyze says it: a line before the first call's first result
  // (its session's label), and `source` and `label` in each call's --json state line. Across
  // workers, the primary (which runs the embedded emulator) says it once; a worker does not.
  const embedded = json || inCallWorker() ? undefined : await embeddedLabel(endpoint.emulator !== undefined, scenario, onWorkers);
  const onLabel = labelLines(json || onWorkers, out, embedded);
  const callStats = createAnalyzeCallsStats();
  const run: CallCommandRun = {
    json,
    out,
    callStats,
    analyze: (worker) => ({
      callStats,
      apiKey: endpoint.apiKey,
      baseUrl: endpoint.baseUrl,
      config: settings.config ?? 'default',
      maxConcurrent: settings.maxCalls,
      whenFull: settings.whenFull,
      limiter: fleet.limiter,
      publish: published.publisher,
      ...(worker ? { worker } : {}),
    }),
  };
  const show = (call: CallAnalysis<C>): Omit<CallViewOptions, 'onEnd'> => ({ json, out, onLabel, ...view(call) });
  try {
    if (onWorkers) {
      const { source: name, keys } = settings.totals;
      return await showCallsOnWorkers(io, { workers: settings.workers, exitAfter: settings.exitAfter, json, endpoint, summary: (s) => workersSummary(s, name, keys) }, (worker) => calls(run, () => undefined, worker), show);
    }
    return await showCalls(io, settings.exitAfter, (fail) => calls(run, fail), show);
  } catch (err) {
    printError(io, err);
    return 1;
  } finally {
    await published.close();
    await fleet.close();
    await endpoint.close();
  }
}
