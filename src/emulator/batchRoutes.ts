// Batch endpoints of the models API (§4.1, §4.2, §4.4) and the preset listing.
import type { HttpRoute } from './routes.js';

/** Routes of the batch endpoints. */
export const batchRoutes: readonly HttpRoute[] = [];
