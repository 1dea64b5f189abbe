// What every long-running command shares as a service: its life cycle moved by the signals (the
// first drains, the second ends what is in flight) and by its parent going away; its one
// registry; and the operator's endpoints (/healthz, /readyz, /metrics) on its own port or on
// --metrics-port.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { ServiceLifecycle, type CallServer } from '../service/lifecycle.js';
import type { ServiceMetric } from '../service/metric.js';
import { createServiceRegistry, type MetricsJson, type ServiceRegistry } from '../service/metrics.js';
import { opsAnswer, opsRoute, startOpsServer, type OpsAnswer, type OpsPath, type OpsServer } from '../service/opsHttp.js';
import type { CliIo } from './command.js';
import { exitWithParent } from './exitWithParent.js';
import { option } from './options.js';
import { portError } from './portCheck.js';

/** `--metrics-port`, `--metrics-host`: the operator's endpoints on a port of their own. */
export const METRICS_OPTIONS = {
  'metrics-port': option.integer('N', '/metrics, /healthz and /readyz on a port of their own (0: a free one, printed)', { min: 0, max: 65535 }),
  'metrics-host': option.text('H', 'interface of --metrics-port (default 127.0.0.1)', '127.0.0.1'),
} as const;

/** `--drain-timeout MS`, for the commands that take calls. */
export const DRAIN_OPTION = {
  'drain-timeout': option.integer('MS', 'on SIGTERM (or a first Ctrl-C) stop taking calls and let those in flight end;\nafter MS (default 30000) end them `shutdown`; a second signal ends them at once', { min: 0, fallback: 30_000 }),
} as const;

/** How {@link startCommandService} runs. */
export interface CommandServiceOptions {
  /** How long a drain waits for what is in flight (default 30 s; 0 for a command with nothing to drain). */
  readonly drainTimeoutMs?: number | undefined;
  readonly metricsPort: number | undefined;
  readonly metricsHost: string;
  /** The command has an HTTP port of its own: the operator's paths go there unless --metrics-port. */
  readonly ownHttpPort: boolean;
  /** The command's families beyond its attached servers'. */
  readonly extra?: (() => readonly ServiceMetric[]) | undefined;
  /** What it cannot serve without (a Redis): unready while down; closed with the service. */
  readonly dependencies?: readonly (CallServer & { close(): Promise<void> })[] | undefined;
  /** With --workers: their registries, summed with the primary's. */
  readonly workers?: (() => Promise<MetricsJson[]>) | undefined;
  /** Said when the first signal drains (default: that nothing new is taken). */
  readonly drainLine?: string | undefined;
  /** Follow the signals and the parent (default true; false for a command that watches them itself). */
  readonly watch?: boolean | undefined;
}

/** A command's service: {@link startCommandService}. */
export interface CommandService {
  readonly lifecycle: ServiceLifecycle;
  /** For the command's own HTTP server: the operator's paths (undefined with --metrics-port, or without a port of its own). */
  readonly onRequest: ((req: IncomingMessage, res: ServerResponse) => boolean) | undefined;
  /** The operator's answer to a path (a worker's requests, forwarded). */
  readonly answer: (path: OpsPath) => Promise<OpsAnswer>;
  /** Resolves when the life cycle has stopped. */
  readonly stopped: Promise<unknown>;
  /** Let go of the signals, the parent watch, the port and the dependencies. */
  close(): Promise<void>;
}

/**
 * Start a command's service side, before the command listens: the life cycle (the command
 * calls `lifecycle.ready()` once it listens, or a server attached to it does), the signals, the
 * parent watch, the registry and the operator's endpoints. `--metrics-port` with prom-client
 * missing is `missing_dependency`'s line, exit 2; on the command's own port, `/metrics` says
 * what to install and the rest goes on.
 */
export async function startCommandService(io: CliIo, options: CommandServiceOptions): Promise<CommandService> {
  const err = (line: string): void => void io.stderr.write(`svc-stream: ${line}\n`);
  const drainTimeoutMs = options.drainTimeoutMs ?? 30_000;
  const lifecycle = new ServiceLifecycle({ drainTimeoutMs });
  const dependencies = (options.dependencies ?? []).map((d) => lifecycle.attach(d));
  let registry: ServiceRegistry | undefined;
  let unavailable = '';
  try {
    registry = await createServiceRegistry(lifecycle, { extra: options.extra });
  } catch (e) {
    // Asked for by flag, it must be there (the commands check it before they start anything).
    if (options.metricsPort !== undefined) throw e;
    unavailable = (e as Error).message;
  }
  const answer = (path: OpsPath): Promise<OpsAnswer> =>
    opsAnswer(path, {
      readiness: () => lifecycle.readiness,
      metrics: async () => (registry ? { contentType: registry.contentType, text: await registry.text(options.workers ? await options.workers() : []) } : { unavailable }),
    });
  let opsServer: OpsServer | undefined;
  if (options.metricsPort !== undefined) {
    opsServer = await startOpsServer(options.metricsHost, options.metricsPort, answer).catch((e: NodeJS.ErrnoException) => {
      throw portError('metrics-port', options.metricsPort!, e, options.metricsHost);
    });
    err(`metrics on http://${options.metricsHost}:${opsServer.port}/metrics (/healthz, /readyz)`);
  }
  const onRequest = opsServer === undefined && options.ownHttpPort ? opsRoute(answer) : undefined;

  // What moves the life cycle: the signals, and the parent going away (npx killed, a shell gone).
  const watch = options.watch !== false;
  const parent = exitWithParent({ ...io, signal: undefined }, watch ? {} : { watchParent: false });
  const onSignal = (): void => {
    const s = lifecycle.state.status;
    if ((s === 'ready' || s === 'starting') && drainTimeoutMs > 0) err(options.drainLine ?? `draining: nothing new is taken; what is in flight ends within ${drainTimeoutMs} ms (a second signal ends it now)`);
    lifecycle.drain('signal');
  };
  const onForce = (): void => {
    if (lifecycle.state.status === 'draining') err('ending what is in flight now (second signal)');
    lifecycle.force('signal');
  };
  const onParentGone = (): void => {
    err(`${String(parent.signal.reason)}: draining`);
    lifecycle.drain('parent-exited');
  };
  if (watch) {
    io.signal?.addEventListener('abort', onSignal, { once: true });
    io.forceSignal?.addEventListener('abort', onForce, { once: true });
    parent.signal.addEventListener('abort', onParentGone, { once: true });
    if (io.signal?.aborted) queueMicrotask(onSignal);
  }
  return {
    lifecycle,
    onRequest,
    answer,
    stopped: lifecycle.whenStopped(),
    async close() {
      parent.dispose();
      io.signal?.removeEventListener('abort', onSignal);
      io.forceSignal?.removeEventListener('abort', onForce);
      await opsServer?.close();
      registry?.close();
      for (const d of dependencies) d.detach();
      await Promise.all((options.dependencies ?? []).map((d) => d.close()));
    },
  };
}
