// The service's one registry (prom-client's): every attached server's figures, the life
// cycle's state and the process's own, read at each scrape; with workers, summed with theirs
// by prom-client's AggregatorRegistry. prom-client is an optional dependency, loaded here only.
import { importOptional } from '../internal/optionalPackage.js';
import type { ServiceLifecycle } from './lifecycle.js';
import type { MetricsJson, ServiceMetric, ServiceRegistry } from './metric.js';

export { countersOnly, type MetricFamilyJson, type MetricsJson, type ServiceRegistry } from './metric.js';

/** Options of {@link createServiceRegistry}. */
export interface ServiceRegistryOptions {
  /** Report the life cycle's state (`svc_stream_ready`, `svc_stream_service_state`): the primary's part, never a worker's. Default true. */
  readonly serviceState?: boolean | undefined;
  /** Families of the command beyond its servers' (a relay's pages, a publisher's backlog). */
  readonly extra?: (() => readonly ServiceMetric[]) | undefined;
  /** Families left out (a worker's calls, which its primary counts). */
  readonly exclude?: readonly string[] | undefined;
}

type PromClient = typeof import('prom-client');
type Family = import('prom-client').Counter<string> | import('prom-client').Gauge<string>;

/** prom-client, or `missing_dependency` with the install line. */
export function loadPromClient(feature = 'metrics (/metrics)'): Promise<PromClient> {
  return importOptional('prom-client', feature, ['prom-client'], async () => {
    const mod = (await import('prom-client')) as PromClient & { default?: PromClient };
    return mod.default ?? mod;
  });
}

const STATES = ['starting', 'ready', 'draining', 'stopped'] as const;

/**
 * The registry of one process: the families of every server attached to `lifecycle` (read
 * from their own state at each scrape, summed over the servers that report the same name), the
 * life cycle's state, the command's `extra` families and prom-client's default process metrics
 * (CPU, memory, handles, event-loop delay, GC). Rejects with `missing_dependency` when
 * prom-client is not installed.
 */
export async function createServiceRegistry(lifecycle: ServiceLifecycle, options: ServiceRegistryOptions = {}): Promise<ServiceRegistry> {
  const prom = await loadPromClient();
  const registry = new prom.Registry();
  prom.collectDefaultMetrics({ register: registry });
  const families = new Map<string, Family>();
  const state = options.serviceState !== false;

  const family = (m: ServiceMetric): Family => {
    let f = families.get(m.name);
    if (f === undefined) {
      const config = { name: m.name, help: m.help, labelNames: [...(m.labels ?? [])], registers: [registry] };
      f = m.type === 'counter' ? new prom.Counter(config) : new prom.Gauge(config);
      families.set(m.name, f);
    }
    return f;
  };
  /** Every family read now: reset, then each server's samples added (one name over several servers adds up). */
  const update = (): void => {
    const metrics: ServiceMetric[] = [];
    for (const server of lifecycle.attached) if (server.metrics) metrics.push(...server.metrics());
    if (options.extra) metrics.push(...options.extra());
    if (state) {
      const readiness = lifecycle.readiness;
      const now = lifecycle.state.status;
      metrics.push(
        { name: 'svc_stream_ready', help: 'Whether the service takes new calls now (what /readyz answers): 1 or 0.', type: 'gauge', samples: () => [{ value: readiness.ready ? 1 : 0 }] },
        {
          name: 'svc_stream_service_state',
          help: 'The life cycle: 1 for the state the service is in (starting, ready, draining, stopped), 0 for the others.',
          type: 'gauge',
          labels: ['state'],
          samples: () => STATES.map((s) => ({ labels: { state: s }, value: s === now ? 1 : 0 })),
        },
      );
    }
    for (const f of families.values()) f.reset();
    for (const m of metrics) {
      if (options.exclude?.includes(m.name)) continue;
      const f = family(m);
      for (const sample of m.samples()) {
        if (!(sample.value >= 0) && m.type === 'counter') continue;
        if (sample.labels) (f as import('prom-client').Gauge<string>).inc(sample.labels, sample.value);
        else (f as import('prom-client').Gauge<string>).inc(sample.value);
      }
    }
  };

  return {
    contentType: registry.contentType,
    async json() {
      update();
      return (await registry.getMetricsAsJSON()) as unknown as MetricsJson;
    },
    async text(others = []) {
      update();
      if (others.length === 0) return registry.metrics();
      const own = await registry.getMetricsAsJSON();
      return prom.AggregatorRegistry.aggregate([own, ...(others as unknown as (typeof own)[])]).metrics();
    },
    close() {
      registry.clear();
    },
  };
}
