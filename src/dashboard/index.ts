// The live dashboard: one session served to any number of browser pages over SSE.
export { startDashboard, type DashboardOptions, type RunningDashboard } from './server.js';
export { dashboardSession, type DashboardSession, type DashboardSessionOptions } from './dashboardSession.js';
export { dashboardView, isTerminalPhase, type DashboardView, type DashboardStatus, type DashboardError } from './view.js';
export { sseFrame, parseSse } from './sse.js';
export { openBrowser } from './openBrowser.js';
export { PAGE_HTML, PAGE_CSS, PAGE_JS } from './page.js';
