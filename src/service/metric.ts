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
  samples(): readonly MetricSample[];
}
