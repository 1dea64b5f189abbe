// `--publish URL` and `--from URL` on the commands that run sessions, against a real
// redis-server and the embedded emulator: analyze publishes under --id, an RTP call under its
// call id, `relay --from` serves both with fleet cursors, `dashboard --from` lists the fleet, and
// a Redis that cannot be reached costs the call nothing but is said on stderr.
import { describe, expect, it } from 'vitest';
import { listRelaySessions, relayMessages, relaySessionUrl } from '../../src/relay/client.js';
import { lastValueFrom, toArray } from 'rxjs';
import { useRedis } from '../fleet/redisFixture.js';
import { sendRtpCall } from '../telephony/helpers.js';
import { runCli } from './runCli.js';

const fixture = useRedis();

const stored = (id: string) => fixture.stored(id);

describe('--publish and --from', () => {
  it('analyze --publish --id: the session in Redis, its statuses and its end; a relay --from serves it with fleet cursors', async () => {
    const r = await runCli(['analyze', 'samples/call.wav', '--json', '--config', 'samples/call.config.json', '--publish', fixture.server.url, '--id', 'desk-1']);
    expect(r.code).toBe(0);
    expect(r.stderr).toContain(`publishing to ${fixture.server.url}`);
    const [label, ...events] = r.stdout.trim().split('\n').slice(0, -1).map((l) => JSON.parse(l) as { type: string });
    expect(label).toMatchObject({ type: 'label', source: 'scenario', file: 'call.scenario.json' });
    const entries = await stored('desk-1');
    expect(entries[0]!.kind).toBe('start');
    expect(entries.filter((e) => e.kind === 'status').map((e) => JSON.parse(e.data).status)).toContain('streaming');
    // The label travels with the statuses, published before the first event it labels.
    const firstLabelled = entries.findIndex((e) => e.kind === 'status' && JSON.parse(e.data).label !== undefined);
    expect(JSON.parse(entries[firstLabelled]!.data).label).toEqual({ source: 'scenario', file: 'call.scenario.json' });
    expect(firstLabelled).toBeLessThan(entries.findIndex((e) => e.kind === 'event'));
    expect(entries.filter((e) => e.kind === 'event').map((e) => (JSON.parse(e.data) as { type: string }).type)).toEqual(events.map((e) => e.type));
    expect(JSON.parse(entries.at(-1)!.data)).toEqual({ status: 'done' });

    const controller = new AbortController();
    let url: string | undefined;
    const relay = runCli(['relay', '--from', fixture.server.url, '--port', '0'], {
      env: { SVC_RELAY_TOKEN: 'tok' },
      signal: controller.signal,
      whileRunning: async (stdout) => {
        await expect.poll(() => /svc-stream relay: (http:\S+)/.exec(stdout())?.[1], { timeout: 20_000 }).toBeDefined();
        url = /svc-stream relay: (http:\S+)/.exec(stdout())![1];
        const listing = await listRelaySessions(url!, { token: 'tok' });
        expect(listing.find((s) => s.id === 'desk-1')).toMatchObject({ title: 'call.wav', status: 'done', ended: true, events: events.length, label: { source: 'scenario', file: 'call.scenario.json' } });
        const messages = await lastValueFrom(relayMessages(relaySessionUrl(url!, 'desk-1'), { token: 'tok' }).pipe(toArray()));
        const ids = messages.flatMap((m) => (m.type === 'event' ? [m.id] : []));
        expect(messages.find((m) => m.type === 'status' && m.label !== undefined)).toMatchObject({ label: { source: 'scenario', file: 'call.scenario.json' } });
        expect(ids).toHaveLength(events.length);
        expect(ids[0]).toMatch(/^[A-Za-z0-9_-]+:\d+-\d+$/);
        controller.abort();
      },
    });
    const done = await relay;
    expect(done.code).toBe(0);
    expect(done.stderr).toContain('serving every session published to');
  }, 60_000);

  it('rtp --publish: each call under its call id', async () => {
    const r = await runCli(['rtp', '--port', '0', '--idle-timeout', '300', '--exit-after', '1', '--json'], {
      env: { SVC_PUBLISH_URL: fixture.server.url },
      whileRunning: async (_stdout, stderr) => {
        await expect.poll(() => /listening for RTP on [\d.]+:(\d+)/.exec(stderr())?.[1], { timeout: 20_000 }).toBeDefined();
        await sendRtpCall(Number(/listening for RTP on [\d.]+:(\d+)/.exec(stderr())![1]), 0xabc, 1, 2);
      },
    });
    expect(r.code).toBe(0);
    const entries = await stored('rtp-00000abc');
    expect(entries[0]).toMatchObject({ kind: 'start' });
    expect(JSON.parse(entries[0]!.data)).toMatchObject({ title: 'rtp-00000abc' });
    expect(entries.at(-1)!.kind).toBe('end');
  }, 30_000);

  it('dashboard --from: the supervisor page lists the fleet', async () => {
    const controller = new AbortController();
    const r = await runCli(['dashboard', '--from', fixture.server.url, '--no-open'], {
      signal: controller.signal,
      whileRunning: async (stdout) => {
        await expect.poll(() => /svc-stream dashboard: (http:\S+)/.exec(stdout())?.[1], { timeout: 20_000 }).toBeDefined();
        const url = /svc-stream dashboard: (http:\S+)/.exec(stdout())![1]!;
        const page = await fetch(url);
        expect(await page.text()).toContain('/fleet.js');
        const listing = await listRelaySessions(url);
        expect(listing.map((s) => s.id)).toContain('desk-1');
        controller.abort();
      },
    });
    expect(r.code).toBe(0);
    expect((await runCli(['dashboard', 'samples/call.wav', '--from', fixture.server.url])).code).toBe(2);
  }, 30_000);

  it('a Redis that cannot be reached: the call completes (exit 0) and stderr says what was not published', async () => {
    const r = await runCli(['analyze', 'samples/call.wav', '--json', '--config', 'samples/call.config.json', '--publish', 'redis://127.0.0.1:9']);
    expect(r.code).toBe(0);
    expect(r.stdout.trim().split('\n').at(-1)).toContain('"type":"state"');
    // Never connected, nothing was sent: every entry is known not published (none unconfirmed).
    expect(r.stderr).toMatch(/svc-stream: publish: session call: (\d+) of \1 entries not published \(redis_unavailable/);
    expect(r.stderr).not.toMatch(/unconfirmed/);
    // One outage, one line.
    expect(r.stderr.match(/the sessions go on/g)).toHaveLength(1);
    expect((await runCli(['analyze', 'samples/call.wav', '--publish', 'http://x'])).code).toBe(2);
    expect((await runCli(['analyze', 'samples/call.wav', '--publish', fixture.server.url, '--id', 'no spaces'])).code).toBe(2);
  }, 60_000);
});
