// The dashboard in headless Chromium: the sample call through the embedded emulator as a
// person would watch it (transcript, roles, topics, done), a reload mid-session, a
// screenshot; and untrusted text shown as text.
import { copyFileSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough, Writable } from 'node:stream';
import { Observable, Subject } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { SvcError, type ServerEvent } from 'svc-stream';
import { dashboardCommand } from '../../src/cli/commands/dashboard.js';
import type { CliIo } from '../../src/cli/command.js';
import { startDashboard } from '../../src/dashboard/server.js';
import { createSessionStats, stateStoreOf } from '../../src/session/stats.js';
import { browserSkipReason, useChromium } from './browser.js';

// Functions passed to page.evaluate run in the page; this project compiles without DOM
// types (and the page's CSP forbids evaluating strings), so name the one global they use.
declare const document: any;

const skip = browserSkipReason();
if (skip) console.warn(`\n[dashboard.browser.test] ${skip}\n`);

const SCREENSHOT = 'test/artifacts/dashboard.png';

function capture(): Writable & { text: () => string } {
  let text = '';
  const w = new Writable({ write(chunk, _enc, cb) { text += String(chunk); cb(); } });
  return Object.assign(w, { text: () => text });
}

async function until<T>(what: string, probe: () => T | undefined, timeoutMs = 10_000): Promise<T> {
  let value: T | undefined;
  await expect.poll(() => (value = probe()) !== undefined, { timeout: timeoutMs, interval: 20, message: `waiting for ${what}` }).toBe(true);
  return value!;
}

describe.skipIf(skip !== undefined)('dashboard in Chromium', () => {
  const chromium = useChromium();

  it('shows the sample call growing to done, survives a reload mid-session, and looks right', async () => {
    const stdout = capture();
    const stderr = capture();
    const controller = new AbortController();
    const io: CliIo = { stdout, stderr, stdin: new PassThrough(), env: {}, signal: controller.signal };
    const exit = dashboardCommand.run(
      ['samples/call.wav', '--config', 'samples/call.config.json', '--speed', '8', '--no-open', '--exit-when-done'],
      io,
    );
    const page = await chromium.context.newPage();
    try {
      const url = await until('the URL', () => /svc-stream dashboard: (http:\/\/127\.0\.0\.1:\d+\/)/.exec(stdout.text())?.[1]);
      const browserErrors: string[] = [];
      page.on('pageerror', (e) => browserErrors.push(e.message));
      page.on('console', (m) => (m.type() === 'error' ? browserErrors.push(m.text()) : undefined));
      await page.goto(url);

      // The transcript grows, with the line in progress marked as such.
      await page.locator('.line.partial .tag.live', { hasText: 'in progress' }).first().waitFor({ timeout: 10_000 });
      await page.waitForFunction(() => document.querySelectorAll('#transcript .line.final').length >= 2, undefined, { timeout: 10_000 });

      // Reload mid-session: the first message brings the whole state back at once.
      const before = await page.locator('#transcript .line').count();
      const statusBefore = await page.locator('body').getAttribute('data-status');
      expect(statusBefore).not.toBe('done');
      await page.reload({ waitUntil: 'domcontentloaded' });
      await page.waitForFunction(() => Number(document.body.dataset.states) >= 1, undefined, { timeout: 1_000 });
      const afterReload = await page.evaluate(() => ({
        lines: document.querySelectorAll('#transcript .line').length as number,
        status: document.body.dataset.status as string,
        first: document.querySelector('#transcript .line .text')?.textContent as string,
      }));
      expect(afterReload.lines).toBeGreaterThanOrEqual(before);
      expect(['streaming', 'paused', 'finishing']).toContain(afterReload.status);
      expect(afterReload.first).toBe('Northwind Bank support, this is Sam. How can I help?');

      // To the end.
      await page.locator('#status[data-status="done"]').waitFor({ timeout: 15_000 });
      await expect.poll(() => page.locator('#transcript .line.final').count()).toBe(10);
      expect(await page.locator('#transcript .line.partial').count()).toBe(0);
      expect(await page.locator('#status').textContent()).toBe('done');
      expect(await page.locator('#conv-type').textContent()).toBe('Billing dispute');
      expect(await page.locator('#roles li[data-speaker="1"] .name').textContent()).toBe('Agent');
      expect(await page.locator('#roles li[data-speaker="2"] .name').textContent()).toBe('Customer');
      expect(await page.locator('#transcript .line[data-speaker="2"] .role').first().textContent()).toBe('Customer');
      expect(await page.locator('#topics .chip').allTextContents()).toEqual(['Duplicate charge', 'Refund']);
      expect(await page.locator('#sentiment svg g.bar').count()).toBeGreaterThanOrEqual(3);
      expect(await page.locator('#sentiment svg g.bar[data-topic="Refund"][data-speaker="1"]').count()).toBe(1);
      expect(await page.locator('#behaviors li').count()).toBe(5);
      expect(await page.locator('#behaviors li[data-behavior="Resolution offered"]').count()).toBe(1);
      expect(await page.locator('#summary').textContent()).toContain('Northwind Bank support call.');
      expect(await page.locator('#audio-pos').textContent()).toBe('0:38.5');
      expect(await page.locator('#error').isHidden()).toBe(true);
      await page.locator('#conn[data-state="ended"]').waitFor({ timeout: 2_000 });

      mkdirSync('test/artifacts', { recursive: true });
      await page.screenshot({ path: SCREENSHOT, fullPage: true });
      expect(browserErrors).toEqual([]);
      expect(await exit).toBe(0);
      expect(stderr.text()).toContain('session done (38.5 s of audio)');
    } finally {
      controller.abort();
      await exit.catch(() => undefined);
      await page.close();
    }
  }, 30_000);

  it("with a person's own audio (no scenario: the emulator does not transcribe), finished lines look finished and the end says why fields are empty", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'svc-own-audio-'));
    const own = join(dir, 'my-call.wav');
    copyFileSync('samples/call.wav', own);
    const stdout = capture();
    const controller = new AbortController();
    const io: CliIo = { stdout, stderr: capture(), stdin: new PassThrough(), env: {}, signal: controller.signal };
    const exit = dashboardCommand.run([own, '--speed', '20', '--no-open', '--exit-when-done'], io);
    const page = await chromium.context.newPage();
    try {
      const url = await until('the URL', () => /svc-stream dashboard: (http:\/\/127\.0\.0\.1:\d+\/)/.exec(stdout.text())?.[1]);
      await page.goto(url);
      await page.locator('#status[data-status="done"]').waitFor({ timeout: 15_000 });
      const finals = await page.locator('#transcript .line.final').count();
      expect(finals).toBeGreaterThan(0);
      // No '…' (the mark of a line in progress) on a finished line: it says it has no transcript.
      const texts = await page.locator('#transcript .line.final .text').allTextContents();
      expect(texts.every((t) => /^no transcript · \d+\.\d s$/.test(t))).toBe(true);
      expect(await page.locator('#transcript .line.final .time').first().textContent()).toMatch(/^\d+:\d{2}\.\d$/);
      expect(await page.locator('#conv-type').textContent()).toBe('No conversation type was detected');
      expect(await page.locator('#topics').textContent()).toBe('No topics');
      expect(await page.locator('#summary').textContent()).toBe('No summary');
      const note = await page.locator('#note').textContent();
      expect(note).toMatch(/^The session is done: \d+ clips in 0:38\.5 of audio\./);
      expect(note).toContain('the local emulator does not transcribe your audio');
      expect(note).toContain('--scenario');
      mkdirSync('test/artifacts', { recursive: true });
      await page.screenshot({ path: 'test/artifacts/dashboard-own-audio.png', fullPage: true });
      expect(await exit).toBe(0);
    } finally {
      controller.abort();
      await exit.catch(() => undefined);
      await page.close();
      rmSync(dir, { recursive: true, force: true });
    }
  }, 30_000);

  it('shows untrusted text as text and an error with its code', async () => {
    const subject = new Subject<ServerEvent>();
    const stats = createSessionStats();
    const store = stateStoreOf(stats);
    const dashboard = await startDashboard({
      events$: new Observable<ServerEvent>((s) => subject.subscribe(s)),
      stats,
      title: '<i>t</i>',
    });
    const page = await chromium.context.newPage();
    page.setDefaultTimeout(5_000);
    try {
      await page.goto(dashboard.url);
      await page.waitForFunction(() => Number(document.body.dataset.states) >= 1);
      // Any status the session's life cycle reports is shown; a resilient session's `reconnecting` reads as such.
      store.set({ status: 'streaming' });
      await page.locator('#status[data-status="streaming"]').waitFor();
      store.set({ status: 'reconnecting', attempt: 1, error: new SvcError('connection_lost', 'lost') });
      await page.locator('#status[data-status="reconnecting"]').waitFor();
      expect(await page.locator('#status').textContent()).toBe('reconnecting…');
      const evil = '<img src=x onerror="document.body.dataset.pwned=1"><b>bold</b> & "quotes"';
      subject.next({ type: 'clip', clip: { clip_uuid: 'c1', speaker_label: '<s>1</s>', text: evil, start_ms: 0, duration_ms: 800, emotion: '<u>Happy</u>' } });
      // The type first: a first type after role picks would discard them (rule 3).
      subject.next({ type: 'conversation_type', pick: { conversation_type_uuid: 'x', name: '<h1>Type</h1>', selection_source: 'inferred' } });
      subject.next({ type: 'participant_role', pick: { speaker_label: '<s>1</s>', name: '<script>alert(1)</script>' } });
      subject.next({ type: 'topics', topics: ['<em>Topic</em>'] });
      subject.next({ type: 'topic_sentiment', topic_sentiment: { topic: '<em>Topic</em>', speaker_label: '<s>1</s>', sentiment_score: -0.5 } });
      subject.next({ type: 'behavior_detection', detection: { behavior_uuid: 'b', behavior_name: '<marquee>B</marquee>', speaker_label: '<s>1</s>' } });
      subject.next({ type: 'summary', text: '<a href="javascript:alert(1)">sum</a>' });
      subject.error(new SvcError('connection_lost', 'the connection dropped <b>mid-stream</b>'));

      await page.locator('#status[data-status="failed"]').waitFor({ timeout: 5_000 });
      expect(await page.locator('#status').textContent()).toBe('failed · connection_lost');
      expect(await page.locator('#error').textContent()).toBe('connection_lostthe connection dropped <b>mid-stream</b>');
      expect(await page.locator('#transcript .line .text').textContent()).toBe(evil);
      expect(await page.locator('#title').textContent()).toBe('<i>t</i>');
      expect(await page.locator('#conv-type').textContent()).toBe('<h1>Type</h1>');
      expect(await page.locator('#roles .name').textContent()).toBe('<script>alert(1)</script>');
      expect(await page.locator('#topics .chip').textContent()).toBe('<em>Topic</em>');
      expect(await page.locator('#sentiment svg text.topic').textContent()).toBe('<em>Topic</em>');
      expect(await page.locator('#behaviors .name').textContent()).toBe('<marquee>B</marquee>');
      expect(await page.locator('#summary').textContent()).toBe('<a href="javascript:alert(1)">sum</a>');
      // No element was made from the data.
      expect(await page.locator('main img, main b, main script, main h1, main em, main marquee, main a, header i').count()).toBe(0);
      expect(await page.locator('body').getAttribute('data-pwned')).toBeNull();
    } finally {
      await page.close();
      await dashboard.close();
    }
  }, 20_000);
});
