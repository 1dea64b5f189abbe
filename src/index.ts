// The public API of svc-stream. Operators over events also live in 'svc-stream/operators'.
export * from './schema/index.js';
export * from './errors.js';
export { redactUrl } from './internal/redact.js';
export * from './audio/index.js';
export * from './session/index.js';
export * from './state/index.js';
export * from './batch/index.js';
export * from './platform/index.js';
export * from './dashboard/index.js';
export * from './telephony/index.js';
export {
  startEmulator,
  loadEmulatorConfig,
  createPlatformRoutes,
  sendJson,
  DEV_API_KEY,
  DEV_ACCOUNT_UUID,
  DEV_PLATFORM_API_KEY,
  LIMIT_DETAILS,
  STREAMING_ERRORS,
  MODELS,
  type EmulatorOptions,
  type RunningEmulator,
  type OrganizationSpec,
  type Organization,
  type Model,
  type ScenarioInput,
  type Scenario,
  type ScenarioStep,
  type Fault,
  type ConnectionSummary,
  type EmulatorContext,
  type HttpRoute,
  type HttpHandler,
  type PlatformBehavior,
  type JobOutcome,
  type EmulatedJobStatus,
} from './emulator/index.js';
