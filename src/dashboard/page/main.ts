// The dashboard page's script: the session's raw events from the relay (same origin), folded
// in the page with splitSession (the reducers the Node side uses), drawn at most every 50 ms.
// Bundled for the browser by esbuild (src/dashboard/pageBundle.ts); served as /app.js.
import { asyncScheduler, Subject } from 'rxjs';
import { relayMessages } from '../../relay/client.js';
import { errorSummary } from '../../relay/protocol.js';
import type { ServerEvent } from '../../schema/events.js';
import type { SessionStatus } from '../../schema/sessionState.js';
import { initialConversationSnapshot } from '../../state/snapshot.js';
import { splitSession } from '../../state/splitSession.js';
import { dashboardView, type DashboardError } from '../view.js';
import { connection, render } from './render.js';
import { DASHBOARD_SESSION_ID } from '../sessionId.js';
import { labelText, type ResultLabel } from '../../schema/resultLabel.js';

let snapshot = initialConversationSnapshot;
let status: SessionStatus = 'connecting';
let title = '';
let label: ResultLabel | null = null;
let events = 0;
let error: DashboardError | null = null;
let version = 0;
let drawing = false;

const draw = (): void => {
  drawing = false;
  render(dashboardView(snapshot, { version, started: true, status, error, title, label, bytesSent: 0, eventsReceived: events }), label ? labelText(label) : '');
};
const changed = (): void => {
  version++;
  if (drawing) return;
  drawing = true;
  asyncScheduler.schedule(draw, 50);
};

// One fold per stream of events: a reset (the relay could not resume where the page was)
// starts a new one from the oldest event kept.
let events$ = new Subject<ServerEvent>();
const fold = (): void => {
  splitSession(events$).snapshot$.subscribe({
    next: (s) => {
      snapshot = s;
      changed();
    },
    // The relay's own failure is reported below; the fold itself does not fail.
    error: () => undefined,
  });
};
fold();

// The session to follow: `?id=` (the fleet dashboard's calls), else the dashboard's one session.
const id = new URLSearchParams(location.search).get('id') ?? DASHBOARD_SESSION_ID;

connection('connecting', 'connecting');
relayMessages(`/sessions/${encodeURIComponent(id)}/events`, { maxRetries: 60 }).subscribe({
  next: (m) => {
    switch (m.type) {
      case 'event':
        events++;
        events$.next(m.event);
        return;
      case 'status':
        if (m.title) title = m.title;
        // What made the results: told before the first event it labels, again when it changes.
        if (m.label) label = m.label;
        // The relay forwards the statuses the session's onStateChange reported, then its end.
        status = m.status as SessionStatus;
        changed();
        return;
      case 'gap':
        // Events the relay no longer holds: the fold is incomplete, and the page says so.
        error = { code: 'relay_gap', message: `${m.gap.missed} events of this session were missed; the view may be incomplete` };
        changed();
        return;
      case 'reset':
        // The relay could not resume where the page was: fold again from the oldest event kept.
        events$.complete();
        events$ = new Subject<ServerEvent>();
        snapshot = initialConversationSnapshot;
        events = 0;
        fold();
        error = { code: 'relay_gap', message: m.reset.reason === 'trimmed' ? 'the oldest events of this session are no longer kept; the view starts later' : 'the session\'s stream was lost and started again; the view starts from there' };
        changed();
        return;
      case 'connection':
        if (m.state === 'open') connection('live', 'live');
        else connection('reconnecting', 'reconnecting…');
        return;
    }
  },
  error: (err: unknown) => {
    error = errorSummary(err);
    status = 'failed';
    events$.complete();
    connection('ended', 'session ended');
    changed();
  },
  complete: () => {
    events$.complete();
    connection('ended', 'session ended');
    changed();
  },
});
