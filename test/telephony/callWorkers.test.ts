import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { afterEach, describe, expect, it } from 'vitest';
import { startEmulator, type RunningEmulator } from '../../src/emulator/index.js';
import { sendRtpCall } from './helpers.js';

const APP = new URL('./fixtures/callWorkersApp.ts', import.meta.url).pathname;

interface Event {
  type: string;
  index?: number;
  pid?: number;
  port?: number;
  id?: string;
  status?: string;
  restart?: boolean;
  restarting?: boolean;
  lostCalls?: string[];
  error?: { code: string; message: string; name: string | null };
  stats?: { workers: number; restarts: number; calls: number; ended: number; lost: number; totals: Record<string, Record<string, number>> };
}

/** The app as a real process tree (a primary and its workers), its events as they come. */
function startApp(env: Record<string, string>): { child: ChildProcess; events: Event[]; next(pred: (e: Event) => boolean): Promise<Event> } {
  const child = spawn(process.execPath, ['--import', 'tsx', APP], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'inherit'] });
  apps.push(child);
  const events: Event[] = [];
  const waiters: Array<{ pred: (e: Event) => boolean; resolve: (e: Event) => void; reject: (err: Error) => void }> = [];
  child.once('exit', (code, signal) => {
    for (const w of waiters.splice(0)) w.reject(new Error(`the app exited (${code ?? signal}) before the event awaited; events: ${JSON.stringify(events.slice(-5))}`));
  });
  createInterface({ input: child.stdout! }).on('line', (line) => {
    const e = JSON.parse(line) as Event;
    events.push(e);
    for (const w of [...waiters]) if (w.pred(e)) (waiters.splice(waiters.indexOf(w), 1), w.resolve(e));
  });
  const next = (pred: (e: Event) => boolean): Promise<Event> => {
    const seen = events.find(pred);
    if (seen) return Promise.resolve(seen);
    if (child.exitCode !== null || child.signalCode !== null) return Promise.reject(new Error(`the app has exited; events: ${JSON.stringify(events.slice(-5))}`));
    return new Promise((resolve, reject) => waiters.push({ pred, resolve, reject }));
  };
  return { child, events, next };
}

let emu: RunningEmulator | undefined;
const apps: ChildProcess[] = [];
afterEach(async () => {
  for (const a of apps.splice(0)) {
    a.kill('SIGTERM');
    await new Promise((r) => (a.exitCode !== null || a.signalCode !== null ? r(undefined) : a.once('exit', r)));
  }
  await emu?.close();
  emu = undefined;
});

describe('callWorkers: calls across worker processes', () => {
  it('a worker killed mid-call ends its calls with worker_exited, is restarted, and the other worker carries on', async () => {
    emu = await startEmulator({ organizations: [{ keys: ['k'], concurrency: 10 }] });
    const app = startApp({ APP_BASE_URL: emu.baseUrl, APP_API_KEY: 'k' });
    const ports = await Promise.all([0, 1].map((i) => app.next((e) => e.type === 'listening' && e.index === i).then((e) => e.port!)));
    const pid1 = (await app.next((e) => e.type === 'worker-started' && e.index === 1)).pid!;
    // Two calls per worker; the ones on worker 1 are still sending when it dies.
    const calls = [sendRtpCall(ports[0]!, 0x100, 1.5, 10), sendRtpCall(ports[0]!, 0x101, 1.5, 10), sendRtpCall(ports[1]!, 0x200, 1.5, 10), sendRtpCall(ports[1]!, 0x201, 1.5, 10)];
    await app.next((e) => e.type === 'call' && e.index === 1 && e.id === 'rtp-00000200');
    await app.next((e) => e.type === 'call' && e.index === 1 && e.id === 'rtp-00000201');
    process.kill(pid1, 'SIGKILL');
    const exited = await app.next((e) => e.type === 'worker-exited');
    expect(exited).toMatchObject({ index: 1, pid: pid1, signal: 'SIGKILL', restarting: true });
    expect([...exited.lostCalls!].sort()).toEqual(['rtp-00000200', 'rtp-00000201']);
    for (const id of ['rtp-00000200', 'rtp-00000201']) {
      const end = await app.next((e) => e.type === 'call-ended' && e.id === id);
      expect(end).toMatchObject({ index: 1, status: 'error', error: { code: 'worker_exited', name: 'SvcError' } });
      expect(end.error!.message).toMatch(/exited on SIGKILL before the call ended; the worker is restarted/);
    }
    const restarted = await app.next((e) => e.type === 'worker-started' && e.index === 1 && e.restart === true);
    expect(restarted.pid).not.toBe(pid1);
    await Promise.all(calls);
    for (const id of ['rtp-00000100', 'rtp-00000101']) expect(await app.next((e) => e.type === 'call-ended' && e.id === id)).toMatchObject({ index: 0, status: 'done' });
    // The restarted worker takes calls again.
    const port1 = (await app.next((e) => e.type === 'listening' && e.index === 1 && e.port !== ports[1])).port!;
    await sendRtpCall(port1, 0x300, 0.5, 5);
    expect(await app.next((e) => e.type === 'call-ended' && e.id === 'rtp-00000300')).toMatchObject({ index: 1, status: 'done' });
    const totals = (await app.next((e) => e.type === 'totals' && e.stats!.ended === 5)).stats!;
    expect(totals).toMatchObject({ workers: 2, restarts: 1, calls: 5, ended: 5, lost: 2 });
    expect(totals.totals['analyzeCalls']).toMatchObject({ done: 3 });
  }, 60_000);

  it('maxLegs and maxConcurrent hold across the workers, the primary keeping the count', async () => {
    emu = await startEmulator({ organizations: [{ keys: ['k'], concurrency: 10 }] });
    const app = startApp({ APP_BASE_URL: emu.baseUrl, APP_API_KEY: 'k', APP_MAX_LEGS: '3', APP_MAX_CALLS: '2', APP_WHEN_FULL: 'reject' });
    const ports = await Promise.all([0, 1].map((i) => app.next((e) => e.type === 'listening' && e.index === i).then((e) => e.port!)));
    // Four legs at once on two workers, three places: one is refused (its datagrams dropped and
    // counted), and of the three legs two get a session and one is rejected.
    await Promise.all([sendRtpCall(ports[0]!, 0x100, 1, 10), sendRtpCall(ports[0]!, 0x101, 1, 10), sendRtpCall(ports[1]!, 0x200, 1, 10), sendRtpCall(ports[1]!, 0x201, 1, 10)]);
    const ends = await Promise.all([0, 1, 2].map((k) => app.next((e) => e.type === 'call-ended' && app.events.filter((x) => x.type === 'call-ended').length > k)));
    expect(ends).toHaveLength(3);
    await app.next((e) => e.type === 'totals' && (e.stats?.ended ?? 0) >= 3);
    const endings = app.events.filter((e) => e.type === 'call-ended');
    expect(endings.map((e) => e.status).sort()).toEqual(['done', 'done', 'rejected']);
    expect(endings.find((e) => e.status === 'rejected')!.error!.code).toBe('concurrency_limit');
    const totals = app.events.filter((e) => e.type === 'totals').at(-1)!.stats!.totals;
    expect(totals['rtpSource']).toMatchObject({ legs: 3 });
    expect(totals['rtpSource']!['refusedLegs']).toBeGreaterThan(0);
    expect(totals['analyzeCalls']).toMatchObject({ calls: 3, done: 2, rejected: 1 });
  }, 60_000);
});
