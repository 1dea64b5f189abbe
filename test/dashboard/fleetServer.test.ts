// The supervisor's dashboard checks every route the same way, against a real redis-server: its
// Host names, its own Origin only (`null` and others refused: /fleet/events included), the
// method, and a session id outside the alphabet refused with 400 before anything reads Redis.
import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startFleetDashboard, type RunningFleetDashboard } from '../../src/dashboard/fleetServer.js';
import { createPublisher } from '../../src/fleet/publisher.js';
import type { Publisher } from '../../src/publishing.js';
import { useRedis } from '../fleet/redisFixture.js';

const fixture = useRedis();
let dashboard: RunningFleetDashboard;
let publisher: Publisher;
beforeAll(async () => {
  dashboard = await startFleetDashboard({ from: fixture.server.url, prefix: 'routes', updateMs: 100 });
  publisher = await createPublisher({ url: fixture.server.url, prefix: 'routes' });
  const s = publisher.session('known');
  s.event({ type: 'topics', topics: ['t'] });
  // vi.waitFor, not expect.poll: this runs in a hook.
  await vi.waitFor(
    () => {
      if (!dashboard.calls().some((c) => c.id === 'known')) throw new Error('the dashboard never showed the published call');
    },
    { timeout: 10_000, interval: 20 },
  );
});
afterAll(async () => {
  await publisher?.close();
  await dashboard?.close();
});

/** One request with the headers as given (Host included): its status and the start of its body. */
function get(path: string, headers: Record<string, string> = {}, method = 'GET'): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port: dashboard.port, path, method, headers: { host: `127.0.0.1:${dashboard.port}`, ...headers } }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => {
        body += c;
        // An event stream does not end: its first bytes are enough.
        if (res.headers['content-type']?.startsWith('text/event-stream')) req.destroy();
      });
      res.on('close', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

/** Calls of `command` Redis has run so far (INFO commandstats). */
async function calls(command: string): Promise<number> {
  const info = await fixture.admin.info('commandstats');
  return Number(new RegExp(`cmdstat_${command}:calls=(\\d+)`).exec(info)?.[1] ?? 0);
}

describe('fleet dashboard routes', () => {
  it('every route: its own Host and Origin only', async () => {
    const own = `http://127.0.0.1:${dashboard.port}`;
    for (const path of ['/', '/fleet.js', '/call', '/fleet/events', '/sessions', '/sessions/known/events']) {
      expect([path, (await get(path)).status]).toEqual([path, 200]);
      expect([path, (await get(path, { origin: own })).status]).toEqual([path, 200]);
      for (const origin of ['https://evil.example', 'null', `http://localhost:${dashboard.port + 1}`]) expect([path, origin, (await get(path, { origin })).status]).toEqual([path, origin, 403]);
      expect([path, (await get(path, { host: 'evil.example' })).status]).toEqual([path, 403]);
    }
    expect((await get('/fleet/events', {}, 'POST')).status).toBe(405);
  });

  it('a session id outside the alphabet: 400, with no Redis lookup', async () => {
    const before = { xrange: await calls('xrange'), exists: await calls('exists'), xrevrange: await calls('xrevrange') };
    for (const id of ['%00', 'a%0D%0Ab', 'a%7Db', 'x'.repeat(129), 'y'.repeat(7000), '%E0%A4%A']) {
      const r = await get(`/sessions/${id}/events`);
      expect([id.slice(0, 12), r.status, JSON.parse(r.body).code]).toEqual([id.slice(0, 12), 400, 'invalid_argument']);
    }
    expect({ xrange: await calls('xrange'), exists: await calls('exists'), xrevrange: await calls('xrevrange') }).toEqual(before);
    // An id in the alphabet that no one published: looked up, then 404.
    expect((await get('/sessions/nobody/events')).status).toBe(404);
  });
});
