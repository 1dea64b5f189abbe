// `--log-format json`: one JSON object a line on stderr (level, time, command, worker, call or
// session id, code, message); and a warning once per process family, not once per worker.
import { afterEach, expect, it } from 'vitest';
import { logRecord } from '../../src/cli/log.js';
import { killSpawned } from './spawned.js';
import { spawnCli } from './rtpTestKit.js';

afterEach(killSpawned);

it('a human line as a record: an error with its code, a warning, a call id lifted out', () => {
  expect(logRecord('svc-stream: port_in_use: --port 7150: the port is in use', 'rtp', undefined)).toMatchObject({ level: 'error', command: 'rtp', code: 'port_in_use', message: '--port 7150: the port is in use' });
  expect(logRecord('svc-stream: warning: no --token', 'media-stream', 1)).toMatchObject({ level: 'warn', worker: 1, message: 'no --token' });
  expect(logRecord('svc-stream: session call-1 done', 'relay', undefined)).toMatchObject({ level: 'info', session: 'call-1' });
  expect(logRecord('rtp-0000abcd error worker_exited: gone', 'rtp', undefined)).toMatchObject({ call: 'rtp-0000abcd' });
  expect(Number.isNaN(Date.parse(logRecord('x', 'rtp', undefined)['time'] as string))).toBe(false);
});

it('media-stream --workers 2 --log-format json: every stderr line is one JSON record, and the no-token warning is said once', async () => {
  const run = spawnCli(['media-stream', '--port', '0', '--workers', '2', '--log-format', 'json']);
  await run.until(() => (run.err().match(/media streams on ws:/g) ?? []).length >= 2);
  run.child.kill('SIGTERM');
  expect(await run.exit()).toBe(0);
  const records = run.err().trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
  for (const r of records) expect(Object.keys(r).slice(0, 3)).toEqual(['level', 'time', 'command']);
  expect(records.filter((r) => r['level'] === 'warn' && /no --token/.test(String(r['message'])))).toHaveLength(1);
  // Each worker's own lines say which worker.
  expect(new Set(records.filter((r) => /media streams on/.test(String(r['message']))).map((r) => r['worker']))).toEqual(new Set([0, 1]));
  expect(records.at(-1)).toMatchObject({ level: 'info', command: 'media-stream', message: expect.stringMatching(/^0 call\(s\): 0 done/) });
}, 30_000);
