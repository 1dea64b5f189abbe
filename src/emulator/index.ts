export { startEmulator, DEV_API_KEY, DEV_ACCOUNT_UUID, DEV_PLATFORM_API_KEY, type EmulatorOptions, type RunningEmulator } from './server.js';
export { sendJson, type EmulatorContext, type HttpRoute, type HttpHandler } from './routes.js';
export { AccountBook, LIMIT_DETAILS, MODELS, DEFAULT_CONCURRENCY, MAX_CONCURRENCY, type Model, type Organization, type OrganizationSpec } from './accounts.js';
export { ScenarioSchema, parseScenario, type Scenario, type ScenarioInput, type ScenarioStep, type Fault } from './scenario.js';
export { STREAMING_ERRORS, type ConnectionSummary } from './streaming.js';
