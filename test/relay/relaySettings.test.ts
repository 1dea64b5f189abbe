// The relay's options read once: defaults, each bound checked by name, origins parsed, the
// token required.
import { describe, expect, it } from 'vitest';
import { relaySettings } from '../../src/relay/relaySettings.js';

describe('relaySettings', () => {
  it('gives every bound its default and parses the origins', () => {
    const s = relaySettings({ token: null, origins: ['https://app.example.com', 'http://LOCALHOST:8080/'] });
    expect(s).toMatchObject({ maxStreams: 256, maxSessions: 1000, keepEndedMs: 600_000, retryMs: 1000, heartbeatMs: 15_000, maxConnections: 1024, headersTimeoutMs: 10_000, maxHeaderBytes: 8192 });
    expect(s.limits).toMatchObject({ historyEvents: 10_000, historyBytes: 16 << 20, maxClientBufferBytes: 256 << 10, stallTimeoutMs: 30_000 });
    expect([...s.origins]).toEqual(['https://app.example.com', 'http://localhost:8080']);
  });

  it('refuses a missing token, a bad bound and what is not an origin, naming each', () => {
    expect(() => relaySettings({} as never)).toThrow(expect.objectContaining({ code: 'invalid_argument', path: 'token' }));
    expect(() => relaySettings({ token: 't', maxHeaderBytes: 0 })).toThrow(expect.objectContaining({ path: 'maxHeaderBytes', message: 'relay option maxHeaderBytes must be a positive number, got 0' }));
    for (const bad of ['https://a.example/path', 'not a url', 'file:///x']) {
      expect(() => relaySettings({ token: 't', origins: [bad] })).toThrow(expect.objectContaining({ path: 'origins' }));
    }
  });
});
