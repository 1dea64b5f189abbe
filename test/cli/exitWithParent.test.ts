// The emulator command ends with whoever started it: a killed parent (npx, a shell), a closed
// stdout pipe, a signal. Real processes from the built dist (npm run build), polled with kill(pid, 0).
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import WebSocket from 'ws';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeAll, expect, it, vi } from 'vitest';

const root = fileURLToPath(new URL('../..', import.meta.url));
const bin = `${root}bin/svc-stream.js`;
const started: number[] = [];

beforeAll(() => {
  if (!existsSync(`${root}dist/cli/exitWithParent.js`)) throw new Error('build dist first: npx tsc -p tsconfig.build.json');
});

afterEach(() => {
  for (const pid of started.splice(0)) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // already gone, as it should be
    }
  }
});

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function gone(pid: number, withinMs = 8000): Promise<boolean> {
  return vi.waitFor(
    () => {
      if (alive(pid)) throw new Error(`${pid} still alive`);
    },
    { timeout: withinMs, interval: 20 },
  ).then(
    () => true,
    () => !alive(pid),
  );
}

function firstLine(child: ChildProcess): Promise<string> {
  return new Promise((resolve, reject) => {
    let text = '';
    child.stdout!.on('data', (c: Buffer) => {
      text += c.toString();
      if (text.includes('\n')) resolve(text.split('\n')[0]!);
    });
    child.once('exit', (code) => reject(new Error(`exited with ${code} before printing`)));
  });
}

it('exits when its parent is killed (SIGKILL: nothing is forwarded), with stdout still open', async () => {
  // A parent that starts the emulator and prints its pid, then is killed the hard way.
  const parentCode = `
    const { spawn } = require('node:child_process');
    const emu = spawn(process.execPath, [${JSON.stringify(bin)}, 'emulator'], { stdio: ['ignore', 'pipe', 'inherit'] });
    emu.stdout.once('data', () => console.log(emu.pid));
    setInterval(() => {}, 1000);
  `;
  const parent = spawn(process.execPath, ['-e', parentCode], { stdio: ['ignore', 'pipe', 'pipe'] });
  started.push(parent.pid!);
  const pid = Number(await firstLine(parent));
  started.push(pid);
  expect(alive(pid)).toBe(true);
  parent.kill('SIGKILL');
  expect(await gone(pid)).toBe(true);
}, 30_000);

function childrenOf(pid: number): number[] {
  const r = spawnSync('ps', ['-o', 'pid=', '--ppid', String(pid)], { encoding: 'utf8' });
  return r.stdout.split('\n').map((l) => Number(l.trim())).filter((n) => n > 0);
}

it('reaps its ffmpeg children when it exits with its parent', async () => {
  // The parent passes the emulator's stdout on, after a line with the emulator's pid.
  const parentCode = `
    const { spawn } = require('node:child_process');
    const emu = spawn(process.execPath, [${JSON.stringify(bin)}, 'emulator'], { stdio: ['ignore', 'pipe', 'inherit'] });
    console.log('PID=' + emu.pid);
    emu.stdout.pipe(process.stdout);
    setInterval(() => {}, 1000);
  `;
  const parent = spawn(process.execPath, ['-e', parentCode], { stdio: ['ignore', 'pipe', 'pipe'] });
  started.push(parent.pid!);
  const env: Record<string, string> = {};
  await new Promise<void>((resolve) => {
    let text = '';
    parent.stdout!.on('data', (c: Buffer) => {
      text += c.toString();
      for (const l of text.split('\n')) if (/^[A-Z_]+=/.test(l)) env[l.slice(0, l.indexOf('='))] = l.slice(l.indexOf('=') + 1);
      if (env['PID'] && env['SVC_API_KEY']) resolve();
    });
  });
  const pid = Number(env['PID']);
  started.push(pid);
  // An MP3 session: the emulator decodes it with an ffmpeg child, kept open by the open socket.
  const ws = new WebSocket(`${env['SVC_BASE_URL']!.replace(/^http/, 'ws')}/api/svc-2-streaming?api_key=${env['SVC_API_KEY']}&audio_format=mp3`);
  ws.on('error', () => undefined);
  await new Promise((r) => ws.once('open', r));
  ws.send('default');
  ws.send(readFileSync(`${root}samples/call.mp3`).subarray(0, 32_000));
  let ffmpeg: number[] = [];
  await expect.poll(() => (ffmpeg = childrenOf(pid)).length, { timeout: 10_000 }).toBeGreaterThan(0);
  started.push(...ffmpeg);
  parent.kill('SIGKILL');
  expect(await gone(pid)).toBe(true);
  for (const child of ffmpeg) expect(await gone(child), `ffmpeg ${child}`).toBe(true);
  ws.terminate();
}, 40_000);

it('exits when the pipe it writes to is closed (EPIPE), not with a crash', async () => {
  // `svc-stream emulator | head -0`: the reader is gone before the KEY=value lines are written.
  const emu = spawn(process.execPath, [bin, 'emulator'], { stdio: ['ignore', 'pipe', 'pipe'] });
  started.push(emu.pid!);
  let stderr = '';
  emu.stderr!.on('data', (c: Buffer) => (stderr += c.toString()));
  emu.stdout!.destroy();
  const code = await new Promise<number | null>((resolve) => emu.once('exit', (c) => resolve(c)));
  expect(stderr).toMatch(/emulator stopping: stdout closed/);
  expect(stderr).not.toMatch(/Error|at /);
  expect(code).toBe(0);
}, 30_000);

for (const sig of ['SIGTERM', 'SIGINT', 'SIGHUP'] as const) {
  it(`exits on ${sig}`, async () => {
    const emu = spawn(process.execPath, [bin, 'emulator'], { stdio: ['ignore', 'pipe', 'pipe'] });
    started.push(emu.pid!);
    await firstLine(emu);
    const exit = new Promise<number | null>((resolve) => emu.once('exit', (code) => resolve(code)));
    emu.kill(sig);
    expect(await exit).toBe(0);
  }, 30_000);
}
