// The one live session a dashboard shows, on the Node side: started once, folded once
// (splitSession) for the final view and `/state`, kept subscribed whoever watches.
import { Subject, type Observable, type Subscription } from 'rxjs';
import type { ServerEvent } from '../schema/events.js';
import { isTerminalStatus, type SessionStatus } from '../schema/sessionState.js';
import type { SessionStats } from '../session/stats.js';
import { sessionFigures } from '../session/figures.js';
import type { AudioFormat } from '../schema/audio.js';
import { initialConversationSnapshot, type ConversationSnapshot } from '../state/snapshot.js';
import { splitSession } from '../state/splitSession.js';
import { errorSummary } from '../relay/protocol.js';
import { dashboardView, type DashboardError, type DashboardView } from './view.js';

/** Options of {@link dashboardSession}: the session's events, its counters and the title. */
export interface DashboardSessionOptions {
  /** The session's events, cold: subscribed once, by `start()`. */
  readonly events$: Observable<ServerEvent>;
  /** The counters the session updates, read for the view's `bytes_sent` and `events_received`. */
  readonly stats?: SessionStats | undefined;
  /** Shown in the page's header. Default `session`. */
  readonly title?: string | undefined;
  /** The format sent (a raw format tells the audio figures' times), for the view's `session` figures. */
  readonly format?: AudioFormat | undefined;
}

/** One conversation session folded into a {@link DashboardView}: start it once, set its status, read `view()`, listen to `changes$` (hot), await `ended`, or `stop()`. */
export interface DashboardSession {
  /** Subscribe to the session (once; later calls do nothing). */
  start(): void;
  /**
   * Say where the session is (`connecting`, `streaming`, `paused`, `finishing`, `closing`,
   * `reconnecting`): each status of the session's `stats.state$`. A terminal
   * status (`done`, `failed`, `closed`) is ignored: the end comes from `events$` itself, which
   * carries the failure. Ignored once it ended.
   */
  setStatus(status: SessionStatus): void;
  /** The current view; computed at most once per version. */
  view(): DashboardView;
  /**
   * Hot: emits (nothing) whenever the view changed; completes after the last change, once
   * the session ended (`done` or `failed`). Late subscribers get later changes only: read
   * `view()` for the current state.
   */
  readonly changes$: Observable<void>;
  /** Resolves with the final view once the session ended: `done`, `failed`, or `closed` (stopped). */
  readonly ended: Promise<DashboardView>;
  /** Unsubscribe from the session if it is still running (status `closed`). */
  stop(): void;
}

/**
 * One session for a dashboard.
 *
 * - Lazy until `start()`; then subscribes to `events$` exactly once and keeps that
 *   subscription until the session ends or `stop()`, whoever is watching (pages come and go).
 * - The view's `status` is the last one given to `setStatus` (the session's `stats.state$`),
 *   else `connecting` until the first event and `streaming` after; `done` (`events$`
 *   completed), `failed` (it errored, with `error`) or `closed` (`stop()`) at the end.
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
  let terminal: { status: 'done' | 'failed' | 'closed'; error: DashboardError | null } | undefined;
  let status: SessionStatus | undefined;
  let version = 0;
  let cached: DashboardView | undefined;
  let sessionSub: Subscription | undefined;
  let startedAt = Date.now();
  let resolveEnded!: (view: DashboardView) => void;
  const ended = new Promise<DashboardView>((resolve) => (resolveEnded = resolve));

  const current = (): SessionStatus => {
    if (terminal) return terminal.status;
    if (status !== undefined) return status;
    return eventsSeen > 0 ? 'streaming' : 'connecting';
  };

  const view = (): DashboardView => {
    if (cached?.version !== version) {
      cached = dashboardView(snapshot, {
        version,
        started,
        status: current(),
        error: terminal?.error ?? null,
        title,
        bytesSent: stats?.bytesSent ?? 0,
        eventsReceived: stats?.eventsReceived ?? eventsSeen,
        label: stats?.label ?? null,
        ...(stats ? { figures: sessionFigures({ stats, format: options.format, startedAt, now: Date.now() }) } : {}),
      });
    }
    return cached;
  };

  const changed = (): void => {
    version++;
    changes.next();
  };

  const end = (statusAtEnd: 'done' | 'failed' | 'closed', error: DashboardError | null): void => {
    if (terminal) return;
    terminal = { status: statusAtEnd, error };
    changed();
    changes.complete();
    resolveEnded(view());
  };

  const start = (): void => {
    if (started) return;
    started = true;
    startedAt = Date.now();
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
      error: (err: unknown) => end('failed', errorSummary(err)),
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

  const setStatus = (next: SessionStatus): void => {
    if (terminal || isTerminalStatus(next) || next === status) return;
    status = next;
    changed();
  };

  return { start, setStatus, view, changes$: changes.asObservable(), ended, stop };
}
