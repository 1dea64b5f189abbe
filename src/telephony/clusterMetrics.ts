// The primary's side of the workers' registries: each worker reports its figures (prom-client
// JSON) each second and when asked; a scrape asks the live ones afresh and keeps what the dead
// ones last reported (their counters), so a worker's figures survive it.
import { countersOnly, type MetricsJson } from '../service/metric.js';
import type { Peer } from './PrimaryBounds.js';

/** How long a scrape waits for a live worker's answer before it takes its last report, ms. */
const ASK_TIMEOUT_MS = 1_000;

interface Reporter {
  readonly peer: Peer;
  last: MetricsJson;
  alive: boolean;
}

/**
 * The workers' registries, in the primary: pass one as `callWorkers`' `metrics` option and sum
 * {@link ClusterMetrics.collect}'s answer with the primary's own (`AggregatorRegistry`).
 */
export class ClusterMetrics {
  /** By node:cluster worker id: a restarted worker is a new one, the dead one's counters stay. */
  private readonly reporters = new Map<number, Reporter>();
  private readonly asked = new Map<number, (json: MetricsJson) => void>();
  private nextId = 0;

  /** A worker came up: it reports from now on. */
  online(workerId: number, peer: Peer): void {
    this.reporters.set(workerId, { peer, last: [], alive: true });
    peer.send({ t: 'svcw:metrics-on' });
  }

  /** A worker's report (the answer to request `id`, or its report of each second). */
  report(workerId: number, json: MetricsJson, id?: number): void {
    const r = this.reporters.get(workerId);
    if (r?.alive) r.last = json;
    if (id === undefined) return;
    const resolve = this.asked.get(id);
    this.asked.delete(id);
    resolve?.(json);
  }

  /** A worker exited: its last report's counters count on (what it did stays done), its gauges go. */
  exited(workerId: number): void {
    const r = this.reporters.get(workerId);
    if (!r) return;
    r.alive = false;
    r.last = countersOnly(r.last);
  }

  /** Every worker's figures now: the live ones asked afresh (their last report after a second's wait), the dead ones' counters. */
  async collect(timeoutMs = ASK_TIMEOUT_MS): Promise<MetricsJson[]> {
    return Promise.all(
      [...this.reporters.values()].map((r) => {
        if (!r.alive || !r.peer.isConnected()) return r.last;
        const id = this.nextId++;
        return new Promise<MetricsJson>((resolve) => {
          const timer = setTimeout(() => {
            this.asked.delete(id);
            resolve(r.last);
          }, timeoutMs);
          this.asked.set(id, (json) => {
            clearTimeout(timer);
            resolve(json);
          });
          r.peer.send({ t: 'svcw:metrics-req', id });
        });
      }),
    );
  }
}
