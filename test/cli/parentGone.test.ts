// A command ends when its parent goes away (npx killed, a shell gone): `rtp` (with its workers)
// and `media-stream` under a shell that is SIGKILLed leave no process behind and free their port.
import { execFileSync } from 'node:child_process';
import dgram from 'node:dgram';
import { createServer } from 'node:net';
import { afterEach, expect, it } from 'vitest';
import { spawned, killSpawned } from './spawned.js';
import { freeUdpPorts } from './rtpTestKit.js';

afterEach(killSpawned);

const BIN = new URL('../../bin/svc-stream.js', import.meta.url).pathname;

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};
/** The pids of `parent`'s children. */
const childrenOf = (parent: number): number[] => {
  let out = '';
  try {
    out = execFileSync('ps', ['-o', 'pid=', '--ppid', String(parent)], { encoding: 'utf8' });
  } catch {
    /* ps exits 1 when there is none */
  }
  return out
    .split('\n')
    .map((l) => Number(l.trim()))
    .filter((n) => n > 0);
};

const udpFree = (port: number): Promise<boolean> =>
  new Promise((resolve) => {
    const s = dgram.createSocket('udp4');
    s.once('error', () => resolve(false));
    s.bind(port, '127.0.0.1', () => s.close(() => resolve(true)));
  });
const tcpFree = (port: number): Promise<boolean> =>
  new Promise((resolve) => {
    const s = createServer();
    s.once('error', () => resolve(false));
    s.listen(port, '127.0.0.1', () => s.close(() => resolve(true)));
  });

/** `svc-stream ARGS` under `sh` (its parent); resolves once it listens, with the shell and everything under it. */
async function underAShell(args: string, ready: RegExp, processes: number) {
  const shell = spawned('sh', ['-c', `${process.execPath} ${BIN} ${args}; echo shell-done`], { stdio: ['ignore', 'pipe', 'pipe'], env: { PATH: process.env['PATH'] } });
  let err = '';
  shell.stderr!.on('data', (d: Buffer) => (err += d.toString()));
  await expect.poll(() => ready.test(err), { timeout: 20_000 }).toBe(true);
  const [cli] = childrenOf(shell.pid!);
  const tree = [cli!, ...childrenOf(cli!)];
  expect(tree).toHaveLength(processes);
  return { shell, tree };
}

it('rtp --workers 2 and media-stream, their shell SIGKILLed: no process left, the ports free', async () => {
  const rtpPort = await freeUdpPorts(2);
  const wsPort = rtpPort; // a TCP port of the same number, free as well in practice; checked below
  expect(await tcpFree(wsPort)).toBe(true);
  const [rtp, media] = await Promise.all([
    underAShell(`rtp --port ${rtpPort} --workers 2`, /listening for RTP[\s\S]*listening for RTP/, 3),
    underAShell(`media-stream --port ${wsPort}`, /media streams on ws:/, 1),
  ]);
  rtp.shell.kill('SIGKILL');
  media.shell.kill('SIGKILL');
  for (const pid of [...rtp.tree, ...media.tree]) await expect.poll(() => alive(pid), { timeout: 15_000 }).toBe(false);
  expect(await udpFree(rtpPort)).toBe(true);
  expect(await udpFree(rtpPort + 1)).toBe(true);
  expect(await tcpFree(wsPort)).toBe(true);
}, 60_000);

