// 'svc-stream/dashboard': the live dashboard — an HTTP page that follows one session, the
// session wrapper that feeds it, and the view model it renders — and the supervisor's page of
// every call published to a Redis (startFleetDashboard).
/// <reference types="node" preserve="true" />

export { startDashboard, type DashboardOptions, type RunningDashboard } from './server.js';
export { dashboardSession, type DashboardSession, type DashboardSessionOptions } from './dashboardSession.js';
export { dashboardView, type DashboardView, type DashboardStatus, type DashboardError, type DashboardSessionFigures } from './view.js';
export type { ResultLabel } from '../schema/resultLabel.js';
export type { SessionFigures } from '../session/figures.js';
export { startFleetDashboard, type FleetDashboardOptions, type RunningFleetDashboard } from './fleetServer.js';
export type { FleetCall } from './fleetView.js';
