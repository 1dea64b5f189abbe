// The counters of `callWorkers`' workers added up in the primary: the last report of each
// worker process by name (rtpSource, mediaStreamServer, analyzeCalls), counts summed over every
// process that ever ran, levels over those running now, peaks as their maximum.
/** Levels (not counts): their totals are over the workers running now. */
const LEVELS = new Set(['running', 'queued']);

export class WorkerTotals {
  /** The last counters of each worker process that ever ran (by cluster id: a restart is a new one), by name. */
  private readonly reported = new Map<number, Map<string, Readonly<Record<string, number>>>>();
  /** The cluster ids of the worker processes running now. */
  private readonly running = new Set<number>();

  /** `totals` is written in place (the stats object users hold). */
  constructor(private readonly totals: Record<string, Record<string, number>>) {}

  started(processId: number): void {
    this.running.add(processId);
  }

  exited(processId: number): void {
    this.running.delete(processId);
    this.retotal();
  }

  report(processId: number, name: string, stats: Readonly<Record<string, number>>): void {
    this.reportAll(processId, { [name]: stats });
  }

  /** One report of a worker process: its counters under each name, as of one moment (its last report is what survives it). */
  reportAll(processId: number, all: Readonly<Record<string, Readonly<Record<string, number>>>>): void {
    let byName = this.reported.get(processId);
    if (!byName) this.reported.set(processId, (byName = new Map()));
    for (const [name, stats] of Object.entries(all)) byName.set(name, stats);
    this.retotal();
  }

  private retotal(): void {
    const totals: Record<string, Record<string, number>> = {};
    for (const [id, byName] of this.reported) {
      for (const [name, s] of byName) {
        const t = (totals[name] ??= {});
        for (const [k, v] of Object.entries(s)) {
          if (LEVELS.has(k) && !this.running.has(id)) continue;
          t[k] = k.startsWith('peak') ? Math.max(t[k] ?? 0, v) : (t[k] ?? 0) + v;
        }
      }
    }
    for (const k of Object.keys(this.totals)) delete this.totals[k];
    Object.assign(this.totals, totals);
  }
}
