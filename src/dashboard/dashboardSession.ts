// The one live session a dashboard shows: started once, folded once (splitSession), kept
// subscribed whoever watches, and turned into versioned views for any number of pages.
import { asyncScheduler, interval, Subject, type Observable, type SchedulerLike, type Subscription } from 'rxjs';
import type { ServerEvent } from '../schema/events.js';
import type { SessionPhase, SessionStats } from '../session/stats.js';
import { initialConversationSnapshot, type ConversationSnapshot } from '../state/snapshot.js';
import { splitSession } from '../state/splitSession.js';
import { dashboardView, type DashboardError, type DashboardView } from './view.js';

/** Options of {@link dashboardSession}: the session's events, its counters, the title, and how often counters are polled. */
export interface DashboardSessionOptions {
  /** The session's events, cold: subscribed once, by `start()`. */
  readonly events$: Observable<ServerEvent>;
  /**
   * The counters the session updates (pass the same object to `conversationSession`), so
   * the page sees connecting, streaming and finishing. Without them the phase is
   * `connecting` until the first event, then `streaming`, then `done` or `error`.
   */
  readonly stats?: SessionStats | undefined;
  /** Shown in the page's header. Default `session`. */
  readonly title?: string | undefined;
  /** How often the counters are read: SessionStats has no change events. Default 100 ms. */
  readonly statsPollMs?: number | undefined;
  /** Scheduler of the counter polling (tests use virtual time). Default `asyncScheduler`. */
  readonly scheduler?: SchedulerLike | undefined;
}

/** One conversation session folded into a {@link DashboardView}: start it once, read `view()`, listen to `changes$` (hot), await `ended`, or `stop()`. */
export interface DashboardSession {
  /** Subscribe to the session (once; later calls do nothing). */
  start(): void;
  /** The current view; computed at most once per version. */
  view(): DashboardView;
  /**
   * Hot: emits (nothing) whenever the view changed; completes after the last change, once
   * the session ended (done or error). Late subscribers get later changes only: read
   * `view()` for the current state.
   */
  readonly changes$: Observable<void>;
  /** Resolves with the final view once the session ended (done, error, or stopped). */
  readonly ended: Promise<DashboardView>;
  /** Unsubscribe from the session if it is still running (phase `closed`). */
  stop(): void;
}

function asDashboardError(err: unknown): DashboardError {
  const e = err as { code?: unknown; message?: unknown } | null;
  const code = typeof e?.code === 'string' ? e.code : 'error';
  const message = typeof e?.message === 'string' ? e.message.split('\n')[0]! : String(err);
  return { code, message };
}

/**
 * One session for a dashboard.
 *
 * - Lazy until `start()`; then subscribes to `events$` exactly once and keeps that
 *   subscription until the session ends or `stop()`, whoever is watching (pages come and go).
 * - The state is the `snapshot$` of `splitSession(events$)`: every §3 ordering rule applied.
 * - `changes$` is hot and completes when the session ends; `view()` always answers at once
 *   with the current state, which is what a late page is sent first.
 */
export function dashboardSession(options: DashboardSessionOptions): DashboardSession {
  const scheduler = options.scheduler ?? asyncScheduler;
  const stats = options.stats;
  const title = options.title ?? 'session';
  const changes = new Subject<void>();

  let started = false;
  let snapshot: ConversationSnapshot = initialConversationSnapshot;
  let eventsSeen = 0;
  let terminal: { phase: SessionPhase; error: DashboardError | null } | undefined;
  let version = 0;
  let cached: DashboardView | undefined;
  let lastPhase: SessionPhase | undefined;
  let sessionSub: Subscription | undefined;
  let pollSub: Subscription | undefined;
  let resolveEnded!: (view: DashboardView) => void;
  const ended = new Promise<DashboardView>((resolve) => (resolveEnded = resolve));

  const phase = (): SessionPhase => {
    if (terminal) return terminal.phase;
    if (stats && started) return stats.phase === 'done' || stats.phase === 'error' ? 'finishing' : stats.phase;
    return eventsSeen > 0 ? 'streaming' : 'connecting';
  };

  const view = (): DashboardView => {
    if (cached?.version !== version) {
      cached = dashboardView(snapshot, {
        version,
        started,
        phase: phase(),
        error: terminal?.error ?? null,
        title,
        bytesSent: stats?.bytesSent ?? 0,
        eventsReceived: stats?.eventsReceived ?? eventsSeen,
      });
    }
    return cached;
  };

  const changed = (): void => {
    version++;
    lastPhase = phase();
    changes.next();
  };

  const end = (phaseAtEnd: SessionPhase, error: DashboardError | null): void => {
    if (terminal) return;
    terminal = { phase: phaseAtEnd, error };
    pollSub?.unsubscribe();
    changed();
    changes.complete();
    resolveEnded(view());
  };

  const start = (): void => {
    if (started) return;
    started = true;
    changed();
    // The counters change without telling anyone (connecting → streaming → finishing):
    // read them on a timer, and say so only when the phase moved.
    pollSub = interval(options.statsPollMs ?? 100, scheduler).subscribe(() => {
      if (!terminal && phase() !== lastPhase) changed();
    });
    const streams = splitSession(options.events$);
    // Subscribed first, so an event is counted before the view it changes is computed.
    // Its error is the snapshot's too, reported there.
    const counted = streams.events$.subscribe({ next: () => void eventsSeen++, error: () => undefined });
    sessionSub = streams.snapshot$.subscribe({
      next: (s) => {
        snapshot = s;
        changed();
      },
      error: (err: unknown) => end('error', asDashboardError(err)),
      complete: () => end('done', null),
    });
    sessionSub.add(counted);
    if (terminal) sessionSub.unsubscribe();
  };

  const stop = (): void => {
    if (terminal) return;
    sessionSub?.unsubscribe();
    end('closed', null);
  };

  return { start, view, changes$: changes.asObservable(), ended, stop };
}
