// Headless Chromium for the dashboard's browser tests: Debian's /usr/bin/chromium driven by
// playwright-core, with a fresh profile and nothing that would reach the internet.
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type BrowserContext } from 'playwright-core';
import { afterAll, beforeAll } from 'vitest';

export const CHROMIUM = '/usr/bin/chromium';

/** Why the browser tests cannot run here, or undefined when they can (CI must always run them). */
export function browserSkipReason(): string | undefined {
  if (existsSync(CHROMIUM)) return undefined;
  if (process.env['CI'] === 'true') return undefined; // fail loudly in CI rather than skip
  return `${CHROMIUM} is not installed (apt-get install -y chromium); skipping the dashboard browser tests`;
}

export interface LaunchedBrowser {
  /** A persistent context on a fresh temporary profile: open pages with `context.newPage()`. */
  readonly context: BrowserContext;
  close(): Promise<void>;
}

export async function launchChromium(): Promise<LaunchedBrowser> {
  const profile = mkdtempSync(join(tmpdir(), 'svc-dashboard-chromium-'));
  // Playwright owns --user-data-dir: a fresh profile goes through launchPersistentContext.
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    timeout: 15_000,
    viewport: { width: 1280, height: 860 },
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
  return {
    context,
    close: async () => {
      await context.close().catch(() => undefined);
      rmSync(profile, { recursive: true, force: true });
    },
  };
}

/**
 * One Chromium for the describe block this is called in: launched in beforeAll, closed in
 * afterAll. Read `.context` inside the tests (it is set once beforeAll ran).
 */
export function useChromium(): { readonly context: BrowserContext } {
  let launched: LaunchedBrowser | undefined;
  beforeAll(async () => {
    launched = await launchChromium();
  }, 20_000);
  afterAll(async () => {
    await launched?.close();
  });
  return {
    get context() {
      return launched!.context;
    },
  };
}
