// The two browser examples (examples/plain-esbuild, examples/react), built with esbuild and
// run in headless Chromium against a relay fed by a real session on the emulator: the page's
// DOM ends equal to Node's snapshot$ of the same session, a page reloaded mid-session ends
// the same, and a page from an origin not on the relay's list is refused.
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { extname, join, normalize } from 'node:path';
import { fileURLToPath } from 'node:url';
import { lastValueFrom, Subject, type Subscription } from 'rxjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { conversationSession } from '../../src/session/conversation.js';
import { createSessionStats, fileSource, splitSession, type BatchConfig, type ConversationSnapshot, type ServerEvent } from 'svc-stream';
import { startEmulator, type RunningEmulator } from 'svc-stream/emulator';
import { createRelay, type Relay } from '../../src/relay/server.js';
import { browserSkipReason, launchChromium, type LaunchedBrowser } from '../dashboard/browser.js';
import { CALL_SCENARIO } from '../emulator/helpers.js';

declare const document: any;

const EXAMPLES = fileURLToPath(new URL('../../examples/', import.meta.url));
const TOKEN = 'examples-token';
const skip = browserSkipReason();
if (skip) console.warn(`\n[examples.browser.test] ${skip}\n`);

const TYPES: Record<string, string> = { '.html': 'text/html; charset=utf-8', '.js': 'text/javascript; charset=utf-8', '.css': 'text/css; charset=utf-8' };

/** A static server of examples/ on its own port: its own origin. */
async function staticServer(): Promise<{ server: Server; origin: string }> {
  const server = createServer((req, res) => {
    const path = normalize(decodeURIComponent(new URL(req.url ?? '/', 'http://x').pathname)).replace(/^\/+/, '');
    const file = join(EXAMPLES, path);
    if (!file.startsWith(EXAMPLES) || !existsSync(file) || !TYPES[extname(file)]) return void res.writeHead(404).end();
    res.writeHead(200, { 'content-type': TYPES[extname(file)]!, 'cache-control': 'no-store' });
    res.end(readFileSync(file));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

/** What the page shows, read from its DOM. */
async function pageView(page: import('playwright-core').Page) {
  return page.evaluate(() => ({
    transcript: [...document.querySelectorAll('#transcript li')].map((li: any) => ({ status: li.dataset.status, speaker: li.dataset.speaker, text: li.querySelector('[data-text]').textContent })),
    roles: [...document.querySelectorAll('#roles li')].map((li: any) => li.textContent),
    topics: [...document.querySelectorAll('#topics li')].map((li: any) => li.textContent),
    sentiment: [...document.querySelectorAll('#sentiment li')].map((li: any) => ({ topic: li.dataset.topic, speaker: li.dataset.speaker, score: Number(li.querySelector('[data-score]').dataset.score) })),
  }));
}

/** The same view from Node's fold of the session. */
function nodeView(s: ConversationSnapshot) {
  return {
    transcript: s.clips.transcript.toArray().map((t) => ({ status: t.status, speaker: t.clip.speaker_label ?? '', text: t.clip.text ?? '…' })),
    roles: s.conversation.roles.toArray().map((r) => `Speaker ${r.speaker_label}: ${r.name ?? r.participant_role_uuid ?? 'assigned'}`),
    topics: [...(s.aggregates.topics ?? [])],
    sentiment: s.aggregates.topicSentiments.toArray().map((t) => ({ topic: t.topic, speaker: t.speaker_label, score: t.sentiment_score })),
  };
}

describe.skipIf(skip !== undefined)('the browser examples in Chromium, on a relay fed by the emulator', () => {
  let chromium: LaunchedBrowser;
  let emulator: RunningEmulator;
  let pages: { server: Server; origin: string };
  let elsewhere: { server: Server; origin: string };
  let relay: Relay;
  let relayUrl: string;
  const config = JSON.parse(readFileSync('samples/call.config.json', 'utf8')) as BatchConfig;

  beforeAll(async () => {
    for (const name of ['plain-esbuild', 'react']) await (await import(`../../examples/${name}/build.mjs`)).buildExample();
    [chromium, emulator, pages, elsewhere] = await Promise.all([launchChromium(), startEmulator({ scenario: CALL_SCENARIO as never }), staticServer(), staticServer()]);
    relay = createRelay({ token: TOKEN, origins: [pages.origin], heartbeatMs: 5_000 });
    relayUrl = (await relay.listen()).url;
  }, 60_000);
  afterAll(async () => {
    await relay?.close();
    await chromium?.close();
    await emulator?.close();
    for (const s of [pages, elsewhere]) s?.server.closeAllConnections();
    await Promise.all([pages, elsewhere].map((s) => new Promise((r) => (s ? s.server.close(r) : r(undefined)))));
  });

  /** One live session on the emulator, folded on this side and relayed under `id`. */
  function liveSession(id: string): { final: Promise<ConversationSnapshot>; subscription: Subscription } {
    const hub = new Subject<ServerEvent>();
    const final = lastValueFrom(splitSession(hub).snapshot$);
    const session = relay.addSession({ id, title: 'call.wav' });
    session.feed(hub);
    const stats = createSessionStats();
    session.follow(stats.state$);
    const subscription = conversationSession(fileSource('samples/call.wav', { realtime: 6 }), { apiKey: emulator.apiKey, baseUrl: emulator.baseUrl, config, stats }).subscribe(hub);
    return { final, subscription };
  }

  for (const example of ['plain-esbuild', 'react'] as const) {
    it(`${example}: shows the call as it grows, survives a reload mid-session, and ends equal to Node's snapshot`, async () => {
      const { final, subscription } = liveSession(`call-${example}`);
      const page = await chromium.context.newPage();
      const errors: string[] = [];
      page.on('pageerror', (e) => errors.push(e.message));
      try {
        const url = `${pages.origin}/${example}/index.html#relay=${encodeURIComponent(relayUrl)}&session=call-${example}&token=${TOKEN}`;
        await page.goto(url);
        await page.waitForFunction(() => document.querySelectorAll('#transcript li').length >= 2, undefined, { timeout: 15_000 });
        expect(await page.locator('#status').getAttribute('data-status')).not.toBe('done');
        // Reload mid-session: the page joins again from the relay's history and refolds.
        await page.reload();
        await page.locator('#status[data-status="done"]').waitFor({ timeout: 25_000 });
        const node = nodeView(await final);
        expect(node.transcript).toHaveLength(10);
        expect(node.topics).toEqual(['Duplicate charge', 'Refund']);
        expect(await pageView(page)).toEqual(node);
        expect(await page.locator('#error').count()).toBe(example === 'react' ? 0 : 1);
        if (example === 'plain-esbuild') expect(await page.locator('#error').isHidden()).toBe(true);
        expect(errors).toEqual([]);
        mkdirSync('test/artifacts', { recursive: true });
        await page.screenshot({ path: `test/artifacts/example-${example}.png`, fullPage: true });
      } finally {
        subscription.unsubscribe();
        await page.close();
      }
    }, 60_000);
  }

  it('a page from an origin not on the list is refused, and says so', async () => {
    relay.addSession({ id: 'refused' });
    const before = relay.stats.refusedOrigin;
    const page = await chromium.context.newPage();
    try {
      await page.goto(`${elsewhere.origin}/plain-esbuild/index.html#relay=${encodeURIComponent(relayUrl)}&session=refused&token=${TOKEN}&retries=1`);
      await page.locator('#status[data-status="error"]').waitFor({ timeout: 15_000 });
      // In a browser the refusal is a CORS failure: the page cannot tell it from a network error.
      expect(await page.locator('#error').textContent()).toMatch(/^connection_failed: /);
      expect(await page.locator('#transcript li').count()).toBe(0);
      expect(relay.stats.refusedOrigin).toBeGreaterThan(before);
    } finally {
      await page.close();
    }
  }, 30_000);
});
