// `import { analyzeConversation } from 'svc-stream'` loads the streaming core and nothing of
// the other areas (each has its own entry); within those entries, the dashboard's page text
// loads on first use, not with the entry, and rtp.js never (the RTP header is read by hand). Checked in a
// fresh Node process (with tsx for the sources) whose load hook lists every file loaded.
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { expect, it } from 'vitest';

const root = fileURLToPath(new URL('../..', import.meta.url));

function filesLoadedBy(code: string): string[] {
  const hook = "export async function load(url, context, next) { if (url.startsWith('file:')) process.stderr.write('LOADED ' + url + '\\n'); return next(url, context); }";
  const register = `import { register } from 'node:module'; register(${JSON.stringify(`data:text/javascript,${encodeURIComponent(hook)}`)});`;
  const child = spawnSync(process.execPath, ['--import', 'tsx', '--import', `data:text/javascript,${encodeURIComponent(register)}`, '--input-type=module', '-e', code], {
    cwd: root,
    encoding: 'utf8',
    timeout: 30_000,
  });
  expect(child.status, child.stderr).toBe(0);
  return child.stderr.split('\n').filter((l) => l.startsWith('LOADED ')).map((l) => l.slice('LOADED '.length));
}

it('the main entry loads no module of another area, and neither rtp.js nor the Redis packages', () => {
  const files = filesLoadedBy("const m = await import('./src/index.ts'); if (typeof m.analyzeConversation !== 'function') throw new Error('missing');");
  expect(files.some((f) => f.endsWith('/src/index.ts'))).toBe(true);
  expect(files.some((f) => f.endsWith('/src/session/conversation.ts'))).toBe(true);
  const areas = files.filter((f) => /\/src\/(batch|platform|telephony|dashboard|relay|fleet|emulator|cli)\//.test(f));
  expect(areas).toEqual([]);
  expect(files.filter((f) => /\/node_modules\/(rtp\.js|ioredis|bullmq|redis-semaphore)\//.test(f))).toEqual([]);
}, 40_000);

it('the dashboard and telephony entries load neither the dashboard page nor rtp.js until they are used', () => {
  const files = filesLoadedBy("await import('./src/dashboard/index.ts'); await import('./src/telephony/index.ts');");
  expect(files.some((f) => f.endsWith('/src/telephony/rtpSource.ts'))).toBe(true);
  expect(files.filter((f) => /\/dashboard\/page\.ts$/.test(f))).toEqual([]);
  expect(files.filter((f) => /\/node_modules\/rtp\.js\//.test(f))).toEqual([]);
}, 40_000);

it('a started dashboard loads its page; a subscribed rtpSource still loads no rtp.js', () => {
  const code = `
    const m = { ...(await import('./src/dashboard/index.ts')), ...(await import('./src/telephony/index.ts')) };
    const { EMPTY } = await import('rxjs');
    const dashboard = await m.startDashboard({ events$: EMPTY });
    await dashboard.close();
    await new Promise((resolve, reject) => {
      const sub = m.rtpSource({ onListening: () => { sub.unsubscribe(); resolve(); } }).subscribe({ error: reject });
    });
  `;
  const files = filesLoadedBy(code);
  expect(files.filter((f) => /\/dashboard\/page\.ts$/.test(f))).toHaveLength(1);
  expect(files.filter((f) => /\/node_modules\/rtp\.js\//.test(f))).toEqual([]);
}, 40_000);
