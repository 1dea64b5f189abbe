// The packet counters of a call server's streams over its whole life: each stream's own
// counters (StreamStats), the ended ones added up once at their end, the running ones read at
// each scrape; and their metric families, one shape for every server (label `source`).
import type { ServiceMetric } from '../service/metric.js';
import type { StreamStats } from './PlayoutStream.js';

const FIGURES = ['received', 'lost', 'late', 'reordered', 'duplicated', 'jitterMsSum', 'jitterSamples'] as const;
type Figure = (typeof FIGURES)[number];

/** The packet counters of every stream a server ever ran. */
export class StreamTotals {
  private readonly ended: Record<Figure, number> = { received: 0, lost: 0, late: 0, reordered: 0, duplicated: 0, jitterMsSum: 0, jitterSamples: 0 };

  /** A stream ended: its counters join the totals (once). */
  add(stats: StreamStats): void {
    for (const k of FIGURES) this.ended[k] += stats[k];
  }

  /** The totals now: the ended streams' plus the `live` ones'. */
  now(live: Iterable<StreamStats>): Record<Figure, number> {
    const t = { ...this.ended };
    for (const s of live) for (const k of FIGURES) t[k] += s[k];
    return t;
  }

  /**
   * The families: packets received, lost, late, reordered and duplicated, and the jitter as a
   * running sum with its sample count (rtpengine's way: `rate(sum) / rate(count)` is the mean
   * interarrival jitter), labelled `source` (`rtp`, `media-stream`, …).
   */
  metrics(source: string, live: () => Iterable<StreamStats>): ServiceMetric[] {
    const labels = { source };
    const family = (name: string, help: string, read: (t: Record<Figure, number>) => number): ServiceMetric => ({
      name,
      help,
      type: 'counter',
      labels: ['source'],
      samples: () => [{ labels, value: read(this.now(live())) }],
    });
    return [
      family('svc_stream_packets_received_total', 'Media packets received by the calls (RTP packets, media-stream chunks), duplicates and late ones included.', (t) => t.received),
      family('svc_stream_packets_lost_total', 'Packets never received before their slot was played (filled with silence).', (t) => t.lost),
      family('svc_stream_packets_late_total', 'Packets that arrived after their slot was filled, dropped.', (t) => t.late),
      family('svc_stream_packets_reordered_total', 'Packets that arrived after a later one and were still played in order.', (t) => t.reordered),
      family('svc_stream_packets_duplicated_total', 'Packets already held or played, dropped.', (t) => t.duplicated),
      family('svc_stream_jitter_seconds_total', 'The interarrival jitter (RFC 3550) after each packet, summed: divide by svc_stream_jitter_samples_total for the mean.', (t) => t.jitterMsSum / 1000),
      family('svc_stream_jitter_samples_total', 'Packets that measured the interarrival jitter.', (t) => t.jitterSamples),
    ];
  }
}
