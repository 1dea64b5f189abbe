// The one runner of every call command (`rtp`, `media-stream`, `audiohook`, `sip`): where the
// sessions go (the embedded emulator when nothing is configured), the fleet's limits and
// publisher, the `source:` lines (each call's label), and the command as a service: one life
// cycle (starting → ready → draining → stopped) moved by the signals, the parent's exit and
// --exit-after; the operator's endpoints (/healthz, /readyz, /metrics); with --workers, the same
// across every worker process; the last line counting the calls by outcome and an exit status
// that says whether one was lost. Each command brings its source and its view.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { tap, type Observable, type Subscription } from 'rxjs';
import type { SessionConfig } from '../schema/config.js';
import type { ServiceLifecycle } from '../service/lifecycle.js';
import { opsAnswer, opsPath, writeOpsAnswer, type OpsAnswer, type OpsPath } from '../service/opsHttp.js';
import { createAnalyzeCallsStats, type AnalyzableCall, type AnalyzeCallsOptions, type AnalyzeCallsStats, type CallAnalysis } from '../telephony/analyzeCalls.js';
import { workerHandle } from '../telephony/callWorker.js';
import { callWorkers, createCallWorkersStats, isCallWorker, type CallWorker, type CallWorkersStats } from '../telephony/callWorkers.js';
import { ClusterMetrics } from '../telephony/clusterMetrics.js';
import { labelLines, showCall, type CallViewOptions } from './callView.js';
import { printError, type CliIo } from './command.js';
import { openEndpoint, type ModelsEndpoint } from './endpoint.js';
import { checkFleetPackages, checkMetricsPackage } from './optionalFlags.js';
import { checkTcpPort, portError } from './portCheck.js';
import { commandPublisher } from './publishFlag.js';
import { publisherPart } from './publishMetrics.js';
import { fleetLimits } from './redisFlag.js';
import { watchRedis } from './redisHealth.js';
import { embeddedLabel } from './resultSource.js';
import { DRAIN_OPTION, METRICS_OPTIONS, startCommandService } from './service.js';

/** The command's own script, which each worker runs again with the same arguments. */
const BIN = new URL('../../bin/svc-stream.js', import.meta.url).pathname;

/** The flags every call command takes as a service: the drain, the operator's port. */
export const SERVICE_OPTIONS = { ...DRAIN_OPTION, ...METRICS_OPTIONS } as const;

/** Whether this process is one of the workers a `--workers` command started. */
export const inCallWorker = isCallWorker;

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
  readonly drainTimeoutMs: number;
  readonly metricsPort: number | undefined;
  readonly metricsHost: string;
  /** What the embedded emulator plays (its label names the file it came from). */
  readonly scenario: unknown;
  /** The command has an HTTP port of its own (media-stream, audiohook): the operator's paths go there unless --metrics-port. */
  readonly ownHttpPort: boolean;
  /** The command's listening flag, for a port taken after the check (`--port 5004 is in use`). */
  readonly port: { readonly flag: string; readonly port: number; readonly host: string };
  /**
   * The source's counters in the last line (`datagrams 7000, legs 20, …`): its `reportStats`
   * name (summed across workers under it) and, in one process, its stats object.
   */
  readonly totals: { readonly source: string; readonly keys: readonly string[]; readonly stats: object };
  /** Lines the primary says on stderr once the flags are checked (a warning of the command's: open to anyone). */
  readonly notices?: readonly string[] | undefined;
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
  readonly 'drain-timeout': number;
  readonly 'metrics-port'?: number | undefined;
  readonly 'metrics-host': string;
}

/** The settings of a call command from its flags and what the command decided itself. */
export function callCommandSettings(values: CallCommandFlags, own: Pick<CallCommandSettings, 'exitAfter' | 'scenario' | 'totals' | 'ownHttpPort' | 'port' | 'notices'>): CallCommandSettings {
  return {
    baseUrl: values['base-url'],
    redis: values.redis,
    publish: values.publish,
    json: values.json === true,
    config: values.config,
    maxCalls: values['max-calls'],
    whenFull: values['when-full'],
    workers: values.workers,
    drainTimeoutMs: values['drain-timeout'],
    metricsPort: values['metrics-port'],
    metricsHost: values['metrics-host'],
    ...own,
  };
}

/** What one process of the command gives its calls. */
export interface CallCommandRun {
  readonly json: boolean;
  /** The counters over every call of this process. */
  readonly callStats: AnalyzeCallsStats;
  /** The process's life cycle (a worker's is its handle's, driven by the primary): the servers attach to it. */
  readonly lifecycle: ServiceLifecycle;
  /** Under --workers, the worker's handle. */
  readonly worker?: CallWorker | undefined;
  /** For a server with an HTTP port of its own: the operator's paths on it (undefined with --metrics-port). */
  readonly onRequest?: ((req: IncomingMessage, res: ServerResponse) => boolean) | undefined;
  /** A line on stdout. */
  out(line: string): void;
  /** The command failed on its own (a demo's player, say): it ends, exit 1. */
  fail(err: unknown): void;
  /** A warning said once per process family: a worker hands it to its primary, which says each code once. */
  warn(code: string, line: string): void;
  /** analyzeCalls' options from the command's flags (sessions, limits, publishing, the life cycle, the worker). */
  analyze<C extends AnalyzableCall>(): AnalyzeCallsOptions<C>;
}

/** One call's start line and end counters, in the command's words. */
export type CallCommandView<C extends AnalyzableCall> = (call: CallAnalysis<C>) => Pick<CallViewOptions, 'started' | 'counters'>;

/**
 * Run a call command: `calls` makes the analysed calls of one process, `view` says how each is
 * shown. Resolves with the exit status: 0 when every accepted call ended `done`, else 1.
 * Throws the usage mistakes (a port in use, a missing package: exit 2) before anything starts.
 */
export async function runCallCommand<C extends AnalyzableCall>(io: CliIo, settings: CallCommandSettings, calls: (run: CallCommandRun) => Observable<CallAnalysis<C>>, view: CallCommandView<C>): Promise<number> {
  const { json, scenario } = settings;
  const worker = inCallWorker();
  const onWorkers = settings.workers > 1 || worker;
  // Before anything starts (no emulator, no worker): the operator's port free, the flags' packages there.
  if (!worker) {
    await checkTcpPort('metrics-port', settings.metricsHost, settings.metricsPort);
    await checkMetricsPackage(settings.metricsPort);
    await checkFleetPackages({ redis: settings.redis, publish: settings.publish }, io.env);
    // Once per process family: the primary says it, its workers do not.
    for (const line of settings.notices ?? []) io.stderr.write(`svc-stream: ${line}\n`);
  }
  const endpoint = await openEndpoint({ baseUrl: settings.baseUrl }, io, scenario !== undefined ? { scenario: scenario as never } : {});
  const fleet = await fleetLimits(settings.redis, io.env);
  // The shared limits' Redis: /readyz is false while it does not answer (the primary watches it).
  const redisUrl = settings.redis ?? io.env['SVC_REDIS_URL'];
  const dependencies = redisUrl && !worker ? [await watchRedis(redisUrl, '--redis')] : [];
  const published = await commandPublisher(settings.publish, io);
  const out = (line: string): void => void io.stdout.write(`${line}\n`);
  // What made the results, as analyze says it: a line before the first call's first result
  // (its session's label), and `source` and `label` in each call's --json state line. Across
  // workers, the primary (which runs the embedded emulator) says it once; a worker does not.
  const embedded = json || worker ? undefined : await embeddedLabel(endpoint.emulator !== undefined, scenario, onWorkers);
  const onLabel = labelLines(json || onWorkers, out, embedded);
  const callStats = createAnalyzeCallsStats();
  const processCalls = (context: Pick<CallCommandRun, 'lifecycle' | 'worker' | 'onRequest' | 'fail' | 'warn'>): Observable<CallAnalysis<C>> => {
    // The publisher's figures are this process's (a worker's own publisher in its registry).
    if (published.publisher) context.lifecycle.attach(publisherPart(published.publisher));
    return calls({
      ...context,
      json,
      out,
      callStats,
      analyze: () => ({
        callStats,
        apiKey: endpoint.apiKey,
        baseUrl: endpoint.baseUrl,
        config: settings.config ?? 'default',
        maxConcurrent: settings.maxCalls,
        whenFull: settings.whenFull,
        limiter: fleet.limiter,
        publish: published.publisher,
        lifecycle: context.lifecycle,
        ...(context.worker ? { worker: context.worker } : {}),
      }),
    });
  };
  const show = (call: CallAnalysis<C>): Omit<CallViewOptions, 'onEnd'> => ({ json, out, onLabel, ...view(call) });
  try {
    if (worker) return await workerProcess(processCalls, show);
    return await serveCalls(io, settings, endpoint, callStats, dependencies, processCalls, show);
  } catch (err) {
    // The command's port was taken since the check: the flag and the port.
    const cause = (err as { cause?: NodeJS.ErrnoException }).cause;
    if (cause?.code === 'EADDRINUSE') throw portError(settings.port.flag, settings.port.port, cause, settings.port.host);
    const code = (err as { code?: string }).code;
    if (code === 'port_in_use' || code === 'invalid_argument' || code === 'missing_dependency') throw err;
    printError(io, err);
    return 1;
  } finally {
    await published.close();
    await fleet.close();
    await endpoint.close();
  }
}

type ProcessCalls<C extends AnalyzableCall> = (context: Pick<CallCommandRun, 'lifecycle' | 'worker' | 'onRequest' | 'fail' | 'warn'>) => Observable<CallAnalysis<C>>;
type Show<C extends AnalyzableCall> = (call: CallAnalysis<C>) => Omit<CallViewOptions, 'onEnd'>;

/** The primary (or the one process): the service side, the calls or the workers, the last line. */
async function serveCalls<C extends AnalyzableCall>(
  io: CliIo,
  settings: CallCommandSettings,
  endpoint: ModelsEndpoint,
  callStats: AnalyzeCallsStats,
  dependencies: Parameters<typeof startCommandService>[1]['dependencies'],
  calls: ProcessCalls<C>,
  show: Show<C>,
): Promise<number> {
  const err = (line: string): void => void io.stderr.write(`svc-stream: ${line}\n`);
  const cluster = settings.workers > 1 ? new ClusterMetrics() : undefined;
  const service = await startCommandService(io, {
    drainTimeoutMs: settings.drainTimeoutMs,
    metricsPort: settings.metricsPort,
    metricsHost: settings.metricsHost,
    ownHttpPort: settings.ownHttpPort,
    dependencies,
    ...(cluster ? { workers: () => cluster.collect() } : {}),
    drainLine: `draining: no new calls; the calls in flight end within ${settings.drainTimeoutMs} ms (a second signal ends them now)`,
  });
  const { lifecycle, onRequest, answer } = service;
  let ended = 0;
  const callEnded = (): void => {
    ended++;
    // Never cuts a call in flight: no new call, and the service stops once those running end.
    if (settings.exitAfter !== undefined && ended === settings.exitAfter) lifecycle.drain('exit-after', Infinity);
  };

  const workersStats = createCallWorkersStats();
  let sub: Subscription | undefined;
  let failure: unknown;
  const failed = new Promise<void>((resolve) => {
    const fail = (e: unknown): void => {
      failure ??= e;
      resolve();
    };
    const warned = new Set<string>();
    const warn = (code: string, line: string): void => {
      if (warned.has(code)) return;
      warned.add(code);
      err(line);
    };
    if (cluster === undefined) {
      sub = calls({ lifecycle, onRequest, fail, warn }).subscribe({
        next: (call) => showCall(call, { ...show(call), onEnd: callEnded }),
        error: fail,
      });
    } else {
      sub = primary(io, settings, endpoint, lifecycle, cluster, workersStats, answer, callEnded, warn).subscribe({ error: fail, complete: () => resolve() });
    }
  });
  try {
    await Promise.race([service.stopped, failed]);
  } finally {
    sub?.unsubscribe();
    await service.close();
  }
  if (failure !== undefined) throw failure;
  const { source, keys, stats } = settings.totals;
  const summary = (s: Readonly<Record<string, number>> | undefined): string => keys.map((k) => `${k} ${s?.[k] ?? 0}`).join(', ');
  // The last line: the calls by outcome.
  if (cluster === undefined) {
    const s = callStats;
    err(`${s.calls} call(s): ${s.done} done, ${s.failed} failed, ${s.shutdown} shutdown, ${s.rejected} rejected; ${summary(stats as Record<string, number>)}`);
    return s.failed + s.shutdown > 0 ? 1 : 0;
  }
  const w = workersStats;
  err(
    `${w.calls} call(s): ${w.done} done, ${w.failed} failed (${w.lost} lost with a worker), ${w.shutdown} shutdown, ${w.rejected} rejected; ${w.restarts} worker restart(s)${w.packetsLostWithWorker > 0 ? ` (${w.packetsLostWithWorker} packets lost with the workers)` : ''}; ${summary(w.totals[source])}`,
  );
  return w.failed + w.shutdown > 0 ? 1 : 0;
}

/** The primary of `--workers`: forks, drives the workers' life cycles with its own, prints what only it knows. */
function primary(
  io: CliIo,
  settings: CallCommandSettings,
  endpoint: ModelsEndpoint,
  lifecycle: ServiceLifecycle,
  cluster: ClusterMetrics,
  stats: CallWorkersStats,
  answer: (path: OpsPath) => Promise<OpsAnswer>,
  callEnded: () => void,
  warn: (code: string, line: string) => void,
): Observable<unknown> {
  const out = (line: string): void => void io.stdout.write(`${line}\n`);
  const err = (line: string): void => void io.stderr.write(`svc-stream: ${line}\n`);
  const listening = new Set<number>();
  return callWorkers(
    {
      workers: settings.workers,
      exec: BIN,
      args: process.argv.slice(2),
      env: { SVC_BASE_URL: endpoint.baseUrl, SVC_API_KEY: endpoint.apiKey },
      stats,
      lifecycle,
      metrics: cluster,
      ops: answer,
    },
    // The calls run in the workers (workerProcess), never here.
    () => {
      throw new Error('callWorkers ran a worker in the primary');
    },
  ).pipe(
    tap((e) => {
      if (e.type === 'worker-started') err(`worker ${e.index} ${e.restart ? 'restarted' : 'started'} (pid ${e.pid})`);
      else if (e.type === 'listening') {
        listening.add(e.index);
        if (listening.size === settings.workers) lifecycle.ready();
      } else if (e.type === 'warning') warn(e.code, e.line);
      else if (e.type === 'worker-exited') {
        err(`worker ${e.index} (pid ${e.pid}) exited ${e.signal ? `on ${e.signal}` : `with code ${e.code}`}${e.lostCalls.length ? `; its ${e.lostCalls.length} call(s) ended worker_exited` : ''}${e.restarting ? '; restarting it' : ''}`);
      } else if (e.type === 'call-ended') {
        // The worker printed its own calls' ends; the calls it took with it, the primary prints.
        if (e.error?.code === 'worker_exited') {
          if (settings.json) out(JSON.stringify({ type: 'call_end', id: e.id, status: e.status, error: { code: e.error.code, message: e.error.message } }));
          else out(`${e.id} ${e.status} ${e.error.code}: ${e.error.message}`);
        }
        callEnded();
      }
    }),
  );
}

/** A worker of `--workers`: its calls until its life cycle (the primary's word) stops; the operator's paths that reach it are the primary's to answer. */
function workerProcess<C extends AnalyzableCall>(calls: ProcessCalls<C>, show: Show<C>): Promise<number> {
  return new Promise<number>((resolve, reject) => {
    callWorkers({}, (worker) => {
      const handle = workerHandle(worker)!;
      const onRequest = (req: IncomingMessage, res: ServerResponse): boolean => {
        const path = opsPath(req.url);
        if (path === undefined) return false;
        // Alive is this process's to say; ready and the figures are the whole service's.
        const answered = path === '/healthz' ? opsAnswer(path, { readiness: () => worker.lifecycle.readiness, metrics: async () => ({ unavailable: '' }) }) : handle.scrape(path);
        void answered.then((a) => writeOpsAnswer(req, res, a));
        return true;
      };
      return calls({ lifecycle: worker.lifecycle, worker, onRequest, fail: (e) => reject(e), warn: (code, line) => handle.warn(code, line) }).pipe(tap((call) => showCall(call, show(call))));
    }).subscribe({ error: reject, complete: () => resolve(0) });
  });
}
