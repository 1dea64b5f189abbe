// The figures of one analyzeCalls subscription for the service's registry: the calls (from
// AnalyzeCallsStats), their outcomes by error code, and their sessions' counters (the sessions'
// own stats: the ended calls' added up once at their end, the running ones read at the scrape).
import type { ServerEventType } from '../schema/events.js';
import { callEndChannel } from '../service/channels.js';
import type { MetricSample, ServiceMetric } from '../service/metric.js';
import type { CallServer } from '../service/lifecycle.js';
import type { SessionStats } from '../session/stats.js';
import type { AnalyzeCallsStats, CallOutcome } from './analyzeCalls.js';

/** The session counters a call's end adds to the totals. */
const SESSION_FIGURES = ['framesSent', 'bytesSent', 'bytesDropped', 'reconnects', 'reconnectingMs', 'eventsReceived'] as const;
type SessionFigure = (typeof SESSION_FIGURES)[number];

/** What an outcome is called in the metrics: `done`, `failed`, `rejected` or `shutdown`. */
export function outcomeLabel(o: Pick<CallOutcome, 'status' | 'error'>): 'done' | 'failed' | 'rejected' | 'shutdown' {
  if (o.status === 'done' || o.status === 'rejected') return o.status;
  return codeOf(o.error) === 'shutdown' ? 'shutdown' : 'failed';
}

function codeOf(error: unknown): string {
  const code = (error as { code?: unknown } | undefined)?.code;
  return typeof code === 'string' ? code : error === undefined ? '' : 'error';
}

/** The counters of one analyzeCalls subscription that its stats do not hold, and its metric families. */
export class CallTally {
  /** Ended calls by outcome and error code (`outcome\0code`). */
  private readonly endings = new Map<string, number>();
  private readonly events = new Map<string, number>();
  private readonly endedSessions: Record<SessionFigure, number> = { framesSent: 0, bytesSent: 0, bytesDropped: 0, reconnects: 0, reconnectingMs: 0, eventsReceived: 0 };

  constructor(
    private readonly stats: AnalyzeCallsStats,
    /** The calls running or queued now, whose sessions are read at each scrape. */
    private readonly live: ReadonlySet<{ readonly analysis: { readonly stats: SessionStats } }>,
  ) {}

  /** A server event of any call. */
  readonly event = (type: ServerEventType): void => {
    this.events.set(type, (this.events.get(type) ?? 0) + 1);
  };

  /** A call ended: its outcome by code, its session's counters into the totals, and the `svc-stream:call:end` channel. */
  readonly ended = (o: CallOutcome, session: SessionStats, id?: string): void => {
    const outcome = outcomeLabel(o);
    const code = codeOf(o.error);
    const key = `${outcome}\0${code}`;
    this.endings.set(key, (this.endings.get(key) ?? 0) + 1);
    for (const k of SESSION_FIGURES) this.endedSessions[k] += session[k];
    if (callEndChannel.hasSubscribers) callEndChannel.publish({ id, status: o.status, outcome, code: code || undefined, session: figuresOf(session) });
  };

  /** The session counters over every call: ended ones' totals plus the running ones' now. */
  sessionTotals(): Record<SessionFigure, number> {
    const t = { ...this.endedSessions };
    for (const r of this.live) for (const k of SESSION_FIGURES) t[k] += r.analysis.stats[k];
    return t;
  }

  /** The metric families (read at each scrape). */
  metrics(): readonly ServiceMetric[] {
    const s = this.stats;
    const one = (value: number): readonly MetricSample[] => [{ value }];
    return [
      { name: 'svc_stream_calls_started_total', help: 'Calls accepted (each call, or track, analysed in its own session).', type: 'counter', samples: () => one(s.calls) },
      { name: 'svc_stream_calls_active', help: 'Calls whose session runs now.', type: 'gauge', samples: () => one(s.running) },
      { name: 'svc_stream_calls_queued', help: 'Calls waiting for a session slot now.', type: 'gauge', samples: () => one(s.queued) },
      {
        name: 'svc_stream_calls_ended_total',
        help: 'Calls ended, by outcome (done, failed, rejected, shutdown) and error code (empty when done).',
        type: 'counter',
        labels: ['outcome', 'code'],
        samples: () =>
          [...this.endings].map(([key, value]) => {
            const [outcome, code] = key.split('\0') as [string, string];
            return { labels: { outcome, code }, value };
          }),
      },
      ...sessionFamilies(() => this.sessionTotals()),
      {
        name: 'svc_stream_session_events_total',
        help: 'Server events received, by type.',
        type: 'counter',
        labels: ['type'],
        samples: () => [...this.events].map(([type, value]) => ({ labels: { type }, value })),
      },
    ];
  }
}

/** The families of sessions' counters (`read`: their totals now): frames and bytes sent, bytes dropped, reconnects and the time they took. */
export function sessionFamilies(read: () => Readonly<Record<SessionFigure, number>>): ServiceMetric[] {
  const family = (name: string, help: string, k: SessionFigure, scale = 1): ServiceMetric => ({ name, help, type: 'counter', samples: () => [{ value: read()[k] * scale }] });
  return [
    family('svc_stream_session_frames_sent_total', 'Binary audio frames sent to the service, over every session.', 'framesSent'),
    family('svc_stream_session_audio_sent_bytes_total', 'Audio bytes flushed to the service (bytes sent again after a reconnect included).', 'bytesSent'),
    family('svc_stream_session_audio_dropped_bytes_total', 'Audio bytes read and never sent (cut by the replay and outage bounds, or left when a session failed).', 'bytesDropped'),
    family('svc_stream_session_reconnects_total', 'Sessions opened again after a retryable failure (the session stats\' `reconnects`).', 'reconnects'),
    family('svc_stream_session_reconnecting_seconds_total', "Time spent reconnecting, as each session's stats count it (`reconnectingMs`).", 'reconnectingMs', 1 / 1000),
  ];
}

/** One session (a command's own, not a call's) as a part of its service: its counters in the registry; nothing to drain. */
export function sessionPart(stats: SessionStats): CallServer {
  return { inFlight: 0, stopAccepting: () => undefined, endCalls: () => undefined, metrics: () => sessionFamilies(() => figuresOf(stats)) };
}

function figuresOf(s: SessionStats): Record<SessionFigure, number> {
  const out = {} as Record<SessionFigure, number>;
  for (const k of SESSION_FIGURES) out[k] = s[k];
  return out;
}
