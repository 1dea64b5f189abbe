// 'svc-stream/browser': what a page needs to fold a session's events itself, made of the
// barrels the other entries export (nothing is listed twice): the event schemas and their
// tolerant parser ('svc-stream/schema'), the reducers ('svc-stream/state'), splitSession and
// the state operators, the errors (the main entry), the relay's client ('svc-stream/relay').
// Its whole import graph is free of Node built-ins and of top-level Node calls, so it bundles
// for the browser with no shims (test/browser/bundle.test.ts bundles it and runs it in Chromium).
export * from '../schema/events.js';
export * from '../schema/parseServerEvent.js';
export * from '../state/index.js';
export * from '../operators/index.js';
export * from '../errors/publicErrors.js';
export type * from '../warnings.js';
export * from '../relay/client.js';
// What made a session's results, as every view shows it (the main and schema entries' names).
export { labelText, ResultLabelSchema, RESULT_SOURCES, type ResultLabel } from '../schema/resultLabel.js';
