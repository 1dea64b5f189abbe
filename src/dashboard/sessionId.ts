// The id of the one session a dashboard relays (its page joins `/sessions/session/events`).
export const DASHBOARD_SESSION_ID = 'session';
