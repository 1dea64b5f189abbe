// The supervisor's dashboard in headless Chromium against a real redis-server: two publishers
// (a real session of the sample call through the embedded emulator, and a scripted call), the
// calls appearing, updating and ending on one page, a call's live view opened from it, and the
// dashboard (its relay) restarted mid-call: the page reconnects and goes on.
import { mkdirSync, readFileSync } from 'node:fs';
import { Subject } from 'rxjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fileSource } from '../../src/audio/fileSource.js';
import { startFleetDashboard, type RunningFleetDashboard } from '../../src/dashboard/fleetServer.js';
import { startEmulator } from '../../src/emulator/server.js';
import { createPublisher } from '../../src/fleet/publisher.js';
import { publishSession } from '../../src/fleet/publishSession.js';
import type { ServerEvent } from '../../src/schema/events.js';
import { conversationSession } from '../../src/session/conversation.js';
import { createSessionStats } from '../../src/session/stats.js';
import { freePort, startRedis, type RunningRedis } from '../fleet/redisServer.js';
import { browserSkipReason, launchChromium, type LaunchedBrowser } from './browser.js';

// Functions passed to page.evaluate run in the page; this project compiles without DOM types.
declare const document: any;

const skip = browserSkipReason();
if (skip) console.warn(`\n[fleet.browser.test] ${skip}\n`);

describe.skipIf(skip !== undefined)('fleet dashboard in Chromium', () => {
  let chromium: LaunchedBrowser;
  let redis: RunningRedis;
  beforeAll(async () => {
    [chromium, redis] = await Promise.all([launchChromium(), startRedis()]);
  }, 20_000);
  afterAll(async () => {
    await chromium?.close();
    await redis?.stop();
  });

  it('every call of two publishers on one page, a call opened live, the dashboard restarted mid-call', async () => {
    const prefix = 'browser';
    const port = await freePort();
    const emulator = await startEmulator({ scenario: JSON.parse(readFileSync('samples/call.scenario.json', 'utf8')) });
    const one = await createPublisher({ url: redis.url, prefix });
    const two = await createPublisher({ url: redis.url, prefix });
    let dashboard: RunningFleetDashboard | undefined = await startFleetDashboard({ from: redis.url, prefix, port, updateMs: 100 });
    const page = await chromium.context.newPage();
    const browserErrors: string[] = [];
    page.on('pageerror', (e) => browserErrors.push(e.message));
    const scripted = new Subject<ServerEvent>();
    try {
      await page.goto(dashboard.url);
      await page.locator('#conn[data-state="live"]').waitFor({ timeout: 10_000 });
      expect(await page.locator('#empty').isVisible()).toBe(true);

      // Publisher two: a scripted call, step by step.
      publishSession(scripted, { publisher: two, id: 'desk-7', title: 'Desk 7' }).subscribe({ error: () => undefined });
      scripted.next({ type: 'conversation_type', pick: { conversation_type_uuid: 'sales', name: 'Sales', selection_source: 'inferred' } });
      scripted.next({ type: 'participant_role', pick: { speaker_label: '1', name: 'Agent' } });
      scripted.next({ type: 'clip', clip: { clip_uuid: 'k1', speaker_label: '2', text: '<b>not markup</b>', start_ms: 0, duration_ms: 2000, emotion: 'Angry' } });
      const desk = page.locator('tr.call[data-id="desk-7"]');
      await desk.locator('.col-emotion .chip', { hasText: '2: Angry' }).waitFor({ timeout: 10_000 });
      expect(await desk.locator('.col-roles').textContent()).toBe('Sales1: Agent');
      expect(await desk.getAttribute('data-status')).toBe('connecting');

      // Publisher one: the sample call, live, through the emulator.
      const config = JSON.parse(readFileSync('samples/call.config.json', 'utf8'));
      const stats = createSessionStats();
      const sample = publishSession(conversationSession(fileSource('samples/call.wav', { realtime: 6 }), { apiKey: emulator.apiKey, baseUrl: emulator.baseUrl, config, stats }), {
        publisher: one,
        id: 'call-a',
        title: 'call.wav',
        state$: stats.state$,
      });
      const sampleDone = new Promise<void>((resolve, reject) => sample.subscribe({ complete: resolve, error: reject }));
      const call = page.locator('tr.call[data-id="call-a"]');
      await call.locator('.session-status[data-status="streaming"]').waitFor({ timeout: 10_000 });
      expect(await page.locator('#live-count').textContent()).toBe('2');

      // The call's live view, opened from its row.
      const [live] = await Promise.all([chromium.context.waitForEvent('page'), call.locator('.name a').click()]);
      await live.waitForLoadState('domcontentloaded');
      expect(new URL(live.url()).pathname).toBe('/call');
      await live.waitForFunction(() => document.querySelectorAll('#transcript .line.final').length >= 1, undefined, { timeout: 10_000 });
      expect(await live.locator('#title').textContent()).toBe('call.wav');

      // The dashboard (the relay both pages read) restarts mid-call.
      await dashboard.close();
      dashboard = undefined;
      await page.locator('#conn[data-state="reconnecting"]').waitFor({ timeout: 10_000 });
      scripted.next({ type: 'behavior_detection', detection: { behavior_uuid: 'b1', behavior_name: 'Escalation request', speaker_label: '2', detected: true } });
      dashboard = await startFleetDashboard({ from: redis.url, prefix, port, updateMs: 100 });
      await page.locator('#conn[data-state="live"]').waitFor({ timeout: 10_000 });
      await desk.locator('.col-behaviors .chip', { hasText: '2: Escalation request' }).waitFor({ timeout: 10_000 });

      // Both calls end; the page says so. The live view, which resumed on the new relay, ends too.
      scripted.next({ type: 'done', duration_ms: 2000 });
      scripted.complete();
      await sampleDone;
      await call.locator('.session-status[data-status="done"]').waitFor({ timeout: 20_000 });
      await desk.locator('.session-status[data-status="done"]').waitFor({ timeout: 10_000 });
      expect(await page.locator('#live-count').textContent()).toBe('0');
      expect(await page.locator('#ended-count').textContent()).toBe('2');
      expect(await call.locator('.col-roles').textContent()).toContain('1: Agent');
      expect(await call.locator('.col-roles').textContent()).toContain('2: Customer');
      expect(await call.locator('.col-behaviors .chip').count()).toBeGreaterThanOrEqual(1);
      expect(await call.locator('.col-emotion .chip').textContent()).toMatch(/^[12]: \w+/);
      expect(await call.locator('.duration').textContent()).toMatch(/^\d+:\d{2}$/);
      await live.locator('#status[data-status="done"]').waitFor({ timeout: 10_000 });
      expect(await live.locator('#transcript .line.final').count()).toBe(10);
      expect(await live.locator('#behaviors li').count()).toBe(5);
      // Text from a call is text, never markup.
      expect(await page.locator('b').count()).toBe(0);

      mkdirSync('test/artifacts', { recursive: true });
      await page.screenshot({ path: 'test/artifacts/fleet.png', fullPage: true });
      await live.close();
      expect(browserErrors).toEqual([]);
    } finally {
      await page.close();
      await dashboard?.close();
      await Promise.allSettled([one.close(), two.close(), emulator.close()]);
    }
  }, 60_000);
});
