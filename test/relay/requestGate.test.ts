// The relay's door on a real HTTP server: other paths left to the caller, the Origin
// allow-list, preflights, the method, an id outside the alphabet, the token, and what it lets in.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { gate, type Admitted } from '../../src/relay/requestGate.js';

let server: Server;
let base: string;
const counters = { refusedOrigin: 0, refusedToken: 0 };
const admitted: Admitted[] = [];
beforeAll(async () => {
  server = createServer((req, res) => {
    const g = gate(req, res, new Set(['https://app.example.com']), 'secret', counters);
    if (g === undefined) return void res.writeHead(418).end();
    if (g === 'answered') return;
    admitted.push(g);
    res.writeHead(200).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

describe('requestGate', () => {
  it('leaves other paths to the caller and refuses, each with its code', async () => {
    expect((await fetch(`${base}/other`)).status).toBe(418);
    const refused = await fetch(`${base}/sessions`, { headers: { origin: 'https://evil.example' } });
    expect([refused.status, ((await refused.json()) as { code: string }).code]).toEqual([403, 'relay_origin_refused']);
    const preflight = await fetch(`${base}/sessions`, { method: 'OPTIONS', headers: { origin: 'https://app.example.com' } });
    expect([preflight.status, preflight.headers.get('access-control-allow-origin')]).toEqual([204, 'https://app.example.com']);
    expect((await fetch(`${base}/sessions`, { method: 'POST', headers: { authorization: 'Bearer secret' } })).status).toBe(405);
    // An id that does not decode, or is outside the alphabet: 400, before the token (and any Redis).
    for (const id of ['%E0%A4%A', '%00', 'a%0D%0Ab', 'a%7Db', 'x'.repeat(129), 'y'.repeat(7000), 'call%201']) {
      const r = await fetch(`${base}/sessions/${id}/events`);
      expect([id.slice(0, 12), r.status, ((await r.json()) as { code: string }).code]).toEqual([id.slice(0, 12), 400, 'invalid_argument']);
    }
    const noToken = await fetch(`${base}/sessions`);
    expect([noToken.status, ((await noToken.json()) as { code: string }).code, noToken.headers.get('www-authenticate')]).toEqual([401, 'relay_unauthorized', 'Bearer']);
    expect(counters).toEqual({ refusedOrigin: 1, refusedToken: 1 });
  });

  it('lets in the list and a session with where it resumes (header first, then the query)', async () => {
    await fetch(`${base}/sessions`, { headers: { authorization: 'Bearer secret' } });
    await fetch(`${base}/sessions/call%7E1/events?token=secret&lastEventId=7`, { headers: { origin: 'https://app.example.com' } });
    await fetch(`${base}/sessions/a/events?lastEventId=7`, { method: 'HEAD', headers: { authorization: 'Bearer secret', 'last-event-id': '9' } });
    expect(admitted.map((a) => [a.sessionId, a.lastEventId, a.head, a.cors['access-control-allow-origin']])).toEqual([
      [undefined, undefined, false, undefined],
      ['call~1', '7', false, 'https://app.example.com'],
      ['a', '9', true, undefined],
    ]);
  });
});
