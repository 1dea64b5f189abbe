// The one live session a dashboard shows, on the Node side: started once, folded once
// (splitSession) for the final view and `/state`, kept subscribed whoever watches.
import { Subject, type Observable, type Subscription } from 'rxjs';
import type { ServerEvent } from '../schema/events.js';
import type { SessionPhase, SessionStats } from '../session/stats.js';
import { initialConversationSnapshot, type ConversationSnapshot } from '../state/snapshot.js';
import { splitSession } from '../state/splitSession.js';
import { dashboardView, type DashboardError, type DashboardView } from './view.js';

/** Options of {@link dashboardSession}: the session's events, its counters and the title. */
export interface DashboardSessionOptions {
  /** The session's events, cold: subscribed once, by `start()`. */
  readonly events$: Observable<ServerEvent>;
  /** The counters the session updates, read for the view's `bytes_sent` and `events_received`. */
  readonly stats?: SessionStats | undefined;
  /** Shown in the page's header. Default `session`. */
  readonly title?: string | undefined;
}

/** One conversation session folded into a {@link DashboardView}: start it once, set its status, read `view()`, listen to `changes$` (hot), await `ended`, or `stop()`. */
export interface DashboardSession {
  /** Subscribe to the session (once; later calls do nothing). */
  start(): void;
  /**
   * Say where the session is (any string: `connecting`, `streaming`, `finishing`,
   * `reconnecting` …), e.g. from the session's `onStateChange`. Ignored once it ended.
   */
  setStatus(status: string): void;
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
 * - The phase is the last status given to `setStatus` (the session's `onStateChange`), else
 *   `connecting` until the first event and `streaming` after; `done`, `error` or `closed` at the end.
 * - The state is the `snapshot$` of `splitSession(events$)`: every §3 ordering rule applied.
 * - `changes$` is hot and completes when the session ends; `view()` always answers at once
 *   with the current state, which is what a late page is sent first.
 */
export function dashboardSession(options: DashboardSessionOptions): DashboardSession {
  const stats = options.stats;
  const title = options.title ?? 'session';
  const changes = new Subject<void>();

  let started = false;
  let snapshot: ConversationSnapshot = initialConversationSnapshot;
  let eventsSeen = 0;
  let terminal: { phase: SessionPhase; error: DashboardError | null } | undefined;
  let status: string | undefined;
  let version = 0;
  let cached: DashboardView | undefined;
  let sessionSub: Subscription | undefined;
  let resolveEnded!: (view: DashboardView) => void;
  const ended = new Promise<DashboardView>((resolve) => (resolveEnded = resolve));

  const phase = (): string => {
    if (terminal) return terminal.phase;
    if (status !== undefined) return status;
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
    changes.next();
  };

  const end = (phaseAtEnd: SessionPhase, error: DashboardError | null): void => {
    if (terminal) return;
    terminal = { phase: phaseAtEnd, error };
    changed();
    changes.complete();
    resolveEnded(view());
  };

  const start = (): void => {
    if (started) return;
    started = true;
    changed();
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

  const setStatus = (next: string): void => {
    if (terminal || next === status) return;
    status = next;
    changed();
  };

  return { start, setStatus, view, changes$: changes.asObservable(), ended, stop };
}
