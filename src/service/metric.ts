// A server's counters as plain data, the way every call server hands them to the service's
// one registry (src/service/metrics.ts turns them into Prometheus' families at each scrape).

/** One value of a metric, with its labels (bounded sets only: never a call id). */
export interface MetricSample {
  readonly labels?: Readonly<Record<string, string>> | undefined;
  readonly value: number;
}

/**
 * One metric family a server reports, read at each scrape from the server's own state.
 *
 * - `name`: the full Prometheus name (`svc_stream_rtp_packets_received_total`); counters end
 *   in `_total`, seconds in `_seconds`, bytes in `_bytes`.
 * - `type`: `counter` (only goes up over the process's life; summed over workers, a dead
 *   worker's last report included) or `gauge` (a level now; summed over the workers alive).
 * - `labels`: the label names every sample carries, from bounded sets (an outcome, an error
 *   code, a track), never a call or session id.
 * - `samples()`: the values now.
 */
export interface ServiceMetric {
  readonly name: string;
  readonly help: string;
  readonly type: 'counter' | 'gauge';
  readonly labels?: readonly string[] | undefined;
  /** The values now. */
  samples(): readonly MetricSample[];
}

/** One process's figures as prom-client's `registry.getMetricsAsJSON()` gives them (what workers send their primary). */
export type MetricsJson = readonly MetricFamilyJson[];

/** One family of {@link MetricsJson}, as far as the primary reads it. */
export interface MetricFamilyJson {
  readonly name: string;
  readonly type: string;
  readonly help: string;
  readonly aggregator: string;
  readonly values: readonly { readonly value: number; readonly labels: Readonly<Record<string, string | number>> }[];
}

/** The registry of one process: {@link createServiceRegistry}. */
export interface ServiceRegistry {
  /** This process's figures now. */
  json(): Promise<MetricsJson>;
  /** Prometheus' text format: this process's figures summed with `others` (its workers'), family by family. */
  text(others?: readonly MetricsJson[]): Promise<string>;
  /** The content type of {@link ServiceRegistry.text}. */
  readonly contentType: string;
  /** Forget every family. */
  close(): void;
}

/**
 * What a dead worker's last report still counts for: its counters (what it did before it died
 * stays done), not its gauges (a level of a process that is gone).
 */
export function countersOnly(json: MetricsJson): MetricsJson {
  return json.filter((f) => f.type === 'counter');
}
