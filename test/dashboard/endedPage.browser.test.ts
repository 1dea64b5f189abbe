// A dashboard page first loaded after its session ended, in headless Chromium: it shows the
// session's title, and for a failed session the failure, not "No speech was detected".
import { Observable } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { SessionError, type ServerEvent } from 'svc-stream';
import { startDashboard } from '../../src/dashboard/server.js';
import { browserSkipReason, useChromium } from './browser.js';

declare const document: any;

const skip = browserSkipReason();

describe.skipIf(skip !== undefined)('a dashboard page loaded after the session ended', () => {
  const chromium = useChromium();

  /** A dashboard whose session has ended with `events$`, and a page first loaded then. */
  async function loadedAfterTheEnd(events$: Observable<ServerEvent>, title: string, check: (page: Awaited<ReturnType<typeof chromium.context.newPage>>) => Promise<void>): Promise<void> {
    const dashboard = await startDashboard({ events$, title, start: 'now' });
    const page = await chromium.context.newPage();
    page.setDefaultTimeout(5_000);
    try {
      await dashboard.session.ended;
      await page.goto(dashboard.url);
      await page.waitForFunction((t: string) => document.getElementById('title').textContent === t, title);
      expect(await page.title()).toBe(`${title} — svc-stream dashboard`);
      await check(page);
    } finally {
      await page.close();
      await dashboard.close();
    }
  }

  it('a failed session: the title, the failed status and the failure where the transcript would be', async () => {
    const failed = new Observable<ServerEvent>((s) => {
      s.next({ type: 'error', error: 'Invalid API key.' });
      s.error(new SessionError('invalid_api_key', 'session closed with 4001: Invalid API key.'));
    });
    await loadedAfterTheEnd(failed, 'call.wav', async (page) => {
      await page.locator('body[data-status="failed"]').waitFor();
      expect(await page.locator('#transcript-empty').textContent()).toBe('The session failed: invalid_api_key: session closed with 4001: Invalid API key.');
    });
  }, 30_000);

  it('a session done without speech: the title, and "No speech was detected"', async () => {
    const silent = new Observable<ServerEvent>((s) => {
      s.next({ type: 'done', duration_ms: 1000 });
      s.complete();
    });
    await loadedAfterTheEnd(silent, 'silence.wav', async (page) => {
      await page.locator('body[data-status="done"]').waitFor();
      expect(await page.locator('#transcript-empty').textContent()).toBe('No speech was detected');
    });
  }, 30_000);
});
