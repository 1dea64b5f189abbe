// samples/dashboard.ts runs as documented: prints the URL, serves the session to a page,
// and (with --exit-when-done) exits once the page has had the final state.
import { from, lastValueFrom } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { splitSession, type ServerEvent } from 'svc-stream';
import { stateJson } from '../../src/state/stateJson.js';
import { connectSse } from '../dashboard/sseClient.js';
import { runSample } from './runSample.js';

describe('samples/dashboard.ts', () => {
  it('serves the sample call to a page and exits when done', async () => {
    const run = runSample('dashboard', ['--speed', '20', '--exit-when-done']);
    try {
      const [, url] = await run.waitForStdout(/Dashboard: (http:\/\/127\.0\.0\.1:\d+\/)\n/);
      const page = await connectSse(`${url}sessions/session/events`);
      await page.closed;
      expect(page.messages.find((m) => m.event === 'status')!.data).toMatchObject({ title: 'call.wav' });
      const events = page.messages.filter((m) => m.event === 'event').map((m) => m.data as ServerEvent);
      const final = stateJson(await lastValueFrom(splitSession(from(events)).snapshot$));
      expect(final).toMatchObject({ conversation_type: { name: 'Billing dispute' } });
      expect(Math.abs(final.duration_ms! - 38_509)).toBeLessThan(50); // paced through ffmpeg: a few ms either way
      expect(final.clips).toHaveLength(10);
      expect(page.messages.at(-1)).toMatchObject({ event: 'end', data: { status: 'done' } });
      expect(await run.exited, run.stderr()).toBe(0);
      expect(run.stdout()).toContain('session done');
    } finally {
      if (run.child.exitCode === null && run.child.pid !== undefined) process.kill(-run.child.pid, 'SIGKILL');
    }
  }, 25_000);
});
