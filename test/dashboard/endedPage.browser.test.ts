// A dashboard page first loaded after its session ended, in headless Chromium: it shows the
// session's title, and for a failed session the failure, not "No speech was detected".
import { Observable } from 'rxjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SessionError, type ServerEvent } from 'svc-stream';
import { startDashboard } from '../../src/dashboard/server.js';
import { browserSkipReason, launchChromium, type LaunchedBrowser } from './browser.js';

declare const document: any;

const skip = browserSkipReason();

describe.skipIf(skip !== undefined)('a dashboard page loaded after the session ended', () => {
  let chromium: LaunchedBrowser;
  beforeAll(async () => {
    chromium = await launchChromium();
  }, 20_000);
  afterAll(async () => {
    await chromium?.close();
  });

  it('a failed session: the title, the failed status and the failure where the transcript would be', async () => {
    const dashboard = await startDashboard({
      events$: () =>
        new Observable<ServerEvent>((s) => {
          s.next({ type: 'error', error: 'Invalid API key.' });
          s.error(new SessionError('invalid_api_key', 'session closed with 4001: Invalid API key.'));
        }),
      title: 'call.wav',
      start: 'now',
    });
    const page = await chromium.context.newPage();
    page.setDefaultTimeout(5_000);
    try {
      await dashboard.session.ended;
      await page.goto(dashboard.url);
      await page.locator('body[data-status="failed"]').waitFor();
      await page.waitForFunction(() => document.getElementById('title').textContent === 'call.wav');
      expect(await page.title()).toBe('call.wav — svc-stream dashboard');
      const empty = await page.locator('#transcript-empty').textContent();
      expect(empty).toBe('The session failed: invalid_api_key: session closed with 4001: Invalid API key.');
    } finally {
      await page.close();
      await dashboard.close();
    }
  }, 30_000);

  it('a session done without speech: the title, and "No speech was detected"', async () => {
    const dashboard = await startDashboard({
      events$: () => new Observable<ServerEvent>((s) => {
        s.next({ type: 'done', duration_ms: 1000 });
        s.complete();
      }),
      title: 'silence.wav',
      start: 'now',
    });
    const page = await chromium.context.newPage();
    page.setDefaultTimeout(5_000);
    try {
      await dashboard.session.ended;
      await page.goto(dashboard.url);
      await page.locator('body[data-status="done"]').waitFor();
      await page.waitForFunction(() => document.getElementById('title').textContent === 'silence.wav');
      expect(await page.locator('#transcript-empty').textContent()).toBe('No speech was detected');
    } finally {
      await page.close();
      await dashboard.close();
    }
  }, 30_000);
});
