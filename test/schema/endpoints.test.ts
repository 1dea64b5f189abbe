// The one table of endpoints: every path once, the streaming ones WebSockets, models looked up by path.
import { describe, expect, it } from 'vitest';
import { ENDPOINTS, MODELS, modelOfPath, pathAndModel, PLATFORM_PATHS, type EndpointDef } from '../../src/schema/endpoints.js';

const defs = Object.entries(ENDPOINTS) as Array<[string, EndpointDef]>;

describe('ENDPOINTS', () => {
  it('lists each path once, under /api/, with a model of MODELS', () => {
    const paths = defs.map(([, d]) => d.path);
    expect(new Set(paths).size).toBe(paths.length);
    for (const [name, d] of defs) {
      expect(d.path, name).toMatch(/^\/api\/svc-2-/);
      expect(MODELS, name).toContain(d.model);
    }
  });

  it('names the WebSocket endpoints …Streaming, and only those', () => {
    for (const [name, d] of defs) expect(d.kind === 'ws', name).toBe(name.endsWith('Streaming'));
  });

  it('only the preset listings are unmetered', () => {
    expect(defs.filter(([, d]) => d.metered === false).map(([n]) => n).sort()).toEqual(['batchPresets', 'streamingPresets']);
  });
});

describe('pathAndModel and modelOfPath', () => {
  it('agree with the table, and know no other path', () => {
    expect(pathAndModel('emotion')).toEqual({ path: '/api/svc-2-emotion-batch', model: 'emotion' });
    for (const [, d] of defs) expect(modelOfPath(d.path)).toBe(d.model);
    expect(modelOfPath('/api/svc-2-nope')).toBeUndefined();
    expect(modelOfPath(PLATFORM_PATHS.submit)).toBeUndefined();
  });
});
