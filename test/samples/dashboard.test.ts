// samples/dashboard.ts runs as documented: prints the URL, serves the session to a page,
// and (with --exit-when-done) exits once the page has had the final state.
import { describe, expect, it } from 'vitest';
import { connectSse } from '../dashboard/sseClient.js';
import { runSample } from './runSample.js';

describe('samples/dashboard.ts', () => {
  it('serves the sample call to a page and exits when done', async () => {
    const run = runSample('dashboard', ['--speed', '20', '--exit-when-done']);
    try {
      const [, url] = await run.waitForStdout(/Dashboard: (http:\/\/127\.0\.0\.1:\d+\/)\n/);
      const page = await connectSse(`${url}events`);
      await page.closed;
      const states = page.messages.filter((m) => m.event === 'state').map((m) => m.data);
      expect(states[0]).toMatchObject({ started: true, title: 'call.wav' });
      expect(states.at(-1)).toMatchObject({ phase: 'done', conversation_type: { name: 'Billing dispute' } });
      expect(Math.abs(states.at(-1).duration_ms - 38_509)).toBeLessThan(50); // paced through ffmpeg: a few ms either way
      expect(states.at(-1).transcript).toHaveLength(10);
      expect(page.messages.at(-1)!.event).toBe('end');
      expect(await run.exited, run.stderr()).toBe(0);
      expect(run.stdout()).toContain('session done');
    } finally {
      if (run.child.exitCode === null && run.child.pid !== undefined) process.kill(-run.child.pid, 'SIGKILL');
    }
  }, 25_000);
});
