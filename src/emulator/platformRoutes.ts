// The orchestration API (§4.5): job submission and polling.
import type { HttpRoute } from './routes.js';

/** Routes of the orchestration API. */
export const platformRoutes: readonly HttpRoute[] = [];
