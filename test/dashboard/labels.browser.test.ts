// What made the results, read off the pages in headless Chromium, for a scripted call (the sample
// call on an emulator playing its scenario) and for one's own audio on the same emulator (espeak-ng
// speech: not the scenario's audio, so speech segments only): the dashboard, the relay's page (a
// call's live view served by the fleet dashboard's relay from Redis) and the supervisor's page
// show the same words, the session's own label (stats.label), from before the first event.
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { lastValueFrom } from 'rxjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fileSource } from '../../src/audio/fileSource.js';
import { startFleetDashboard, type RunningFleetDashboard } from '../../src/dashboard/fleetServer.js';
import { startDashboard } from '../../src/dashboard/server.js';
import { loadScenarioFile } from '../../src/emulator/scenario.js';
import { startEmulator, type RunningEmulator } from '../../src/emulator/server.js';
import { createPublisher } from '../../src/fleet/publisher.js';
import type { Publisher } from '../../src/publishing.js';
import { labelText, type ResultLabel } from '../../src/schema/resultLabel.js';
import { conversationSession } from '../../src/session/conversation.js';
import { createSessionStats, type SessionStats } from '../../src/session/stats.js';
import { startRedis, type RunningRedis } from '../fleet/redisServer.js';
import { browserSkipReason, useChromium } from './browser.js';

declare const document: any;

const skip = browserSkipReason();
if (skip) console.warn(`\n[labels.browser.test] ${skip}\n`);

const dir = mkdtempSync(join(tmpdir(), 'svc-labels-browser-'));
const OWN = join(dir, 'mine.wav');

const CALLS: ReadonlyArray<{ readonly id: string; readonly file: () => string; readonly label: ResultLabel }> = [
  { id: 'scripted', file: () => 'samples/call.wav', label: { source: 'scenario', file: 'call.scenario.json' } },
  { id: 'own', file: () => OWN, label: { source: 'emulator', note: 'speech segments only: this audio is not call.wav, which scenario call.scenario.json scripts' } },
];

describe.skipIf(skip !== undefined)('the label on every page, in Chromium', () => {
  const browser = useChromium();
  let redis: RunningRedis;
  let emulator: RunningEmulator;
  let publisher: Publisher;
  let fleet: RunningFleetDashboard;
  beforeAll(async () => {
    execFileSync('espeak-ng', ['-w', OWN, 'Hi, I would like to change the address on my account, please. I moved last month.'], { timeout: 20_000 });
    redis = await startRedis();
    emulator = await startEmulator({ scenario: await loadScenarioFile('samples/call.scenario.json') });
    publisher = await createPublisher({ url: redis.url, prefix: 'labels' });
    fleet = await startFleetDashboard({ from: redis.url, prefix: 'labels', updateMs: 100 });
  }, 30_000);
  afterAll(async () => {
    await fleet?.close();
    await publisher?.close();
    await emulator?.close();
    await redis?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  const session = (file: string, stats: SessionStats) => conversationSession(fileSource(file), { apiKey: emulator.apiKey, baseUrl: emulator.baseUrl, stats });

  /** The label a page shows: its text and its source. */
  const shown = async (page: import('playwright-core').Page, selector: string) => {
    await page.locator(selector).first().waitFor({ state: 'visible', timeout: 15_000 });
    return page.evaluate((sel: string) => {
      const el = document.querySelector(sel);
      return { text: el.textContent, source: el.dataset.source };
    }, selector);
  };

  it.each(CALLS)('$id: the dashboard shows the session\'s label, and /state has it', async ({ id, file, label }) => {
    const stats = createSessionStats();
    const dashboard = await startDashboard({ events$: session(file(), stats), stats, title: id });
    const page = await browser.context.newPage();
    try {
      await page.goto(dashboard.url);
      await page.locator('#status[data-status="done"]').waitFor({ timeout: 30_000 });
      expect(stats.label).toEqual(label);
      expect(await shown(page, '#source')).toEqual({ text: labelText(label), source: label.source });
      mkdirSync('test/artifacts', { recursive: true });
      await page.screenshot({ path: `test/artifacts/label-${id}.png` });
      const state = (await (await fetch(`${dashboard.url}state`)).json()) as { label: ResultLabel };
      expect(state.label).toEqual(label);
    } finally {
      await page.close();
      await dashboard.close();
    }
  }, 60_000);

  it('the supervisor\'s page and each call\'s live view (the relay\'s page) show the same labels', async () => {
    const ran = CALLS.map(({ id, file }) => {
      const stats = createSessionStats();
      return lastValueFrom(publisher.publish(session(file(), stats), { id, title: id, state$: stats.state$ }), { defaultValue: undefined });
    });
    await Promise.all(ran);
    const page = await browser.context.newPage();
    try {
      await page.goto(fleet.url);
      for (const { id, label } of CALLS) {
        const row = `tr.call[data-id="${id}"]`;
        await page.locator(`${row} .session-status[data-status="done"]`).waitFor({ timeout: 20_000 });
        expect(await shown(page, `${row} .source`)).toEqual({ text: labelText(label), source: label.source });
        const live = await browser.context.newPage();
        try {
          await live.goto(`${fleet.url}call?id=${encodeURIComponent(id)}`);
          await live.locator('#status[data-status="done"]').waitFor({ timeout: 20_000 });
          expect(await shown(live, '#source')).toEqual({ text: labelText(label), source: label.source });
        } finally {
          await live.close();
        }
      }
      await page.screenshot({ path: 'test/artifacts/label-fleet.png' });
      // The relay's listing says it too.
      const listing = (await (await fetch(`${fleet.url}sessions`)).json()) as { sessions: Array<{ id: string; label?: ResultLabel }> };
      for (const { id, label } of CALLS) expect(listing.sessions.find((s) => s.id === id)?.label).toEqual(label);
    } finally {
      await page.close();
    }
  }, 90_000);
});
