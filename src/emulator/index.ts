// The public API of 'svc-stream/emulator': a local, faithful emulator of the whole service
// interface (auth, limits, close codes, error bodies, event ordering). Kept out of the main
// entry so a client import never loads an HTTP server.
/// <reference types="node" preserve="true" />
export { startEmulator, DEV_API_KEY, DEV_ACCOUNT_UUID, DEV_PLATFORM_API_KEY, type EmulatorOptions, type RunningEmulator } from './server.js';
export { sendJson, DEFAULT_EMULATOR_LIMITS, type EmulatorContext, type EmulatorLimits, type HttpRoute, type HttpHandler } from './routes.js';
export { LIMIT_DETAILS, MODELS, DEFAULT_CONCURRENCY, MAX_CONCURRENCY, type Model, type Organization, type OrganizationSpec } from './accounts.js';
export {
  ScenarioSchema,
  parseScenario,
  loadScenarioFile,
  ScenarioStepSchema,
  TranscriptTurnSchema,
  TimelineEntrySchema,
  FaultSchema,
  FAULT_POINTS,
  type Scenario,
  type ScenarioInput,
  type ScenarioStep,
  type Fault,
  type TranscriptTurn,
  type TimelineEntry,
} from './scenario.js';
export { STREAMING_ERRORS, GOING_AWAY_CLOSE_CODE } from './streamingProtocol.js';
export type { ConnectionStatus, ConnectionSummary } from './StreamingConnection.js';
export type { AlignmentNote } from './resumeAlignment.js';
export {
  loadEmulatorConfig,
  emulatorOptionsFromConfig,
  EmulatorConfigSchema,
  OrganizationConfigSchema,
  type EmulatorConfig,
} from './config.js';
export { createPlatformRoutes, type PlatformBehavior, type JobOutcome, type EmulatedJobStatus } from './platformRoutes.js';
