// One input check for every command (issue 39, item 6), as a table: every command that takes
// files × each bad file, every command that listens × a port in use, every flag whose optional
// package is missing. Each: exit 2, one line naming the file or the flag, and nothing started
// (no emulator, nothing on stdout).
import { execFile } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import dgram from 'node:dgram';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from './runCli.js';

const ROOT = new URL('../../', import.meta.url).pathname;
const SAMPLE = join(ROOT, 'samples/call.wav');
let dir: string;
const bad: Record<string, string> = {};
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'svc-input-checks-'));
  bad['missing'] = join(dir, 'nope.wav');
  bad['empty'] = join(dir, 'empty.wav');
  writeFileSync(bad['empty'], '');
  bad['text named .wav'] = join(dir, 'notes.wav');
  writeFileSync(bad['text named .wav'], 'These are my notes about the call, not audio.\n'.repeat(20));
  bad['raw without --format'] = join(dir, 'call.ulaw');
  writeFileSync(bad['raw without --format'], Buffer.alloc(8000, 0xff));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** How each bad file is refused: its code and what the line says after the path. */
const REFUSALS: Record<string, RegExp> = {
  missing: /^svc-stream: file_not_found: (\S+): no such file$/,
  empty: /^svc-stream: empty_file: (\S+): the file is empty$/,
  'text named .wav': /^svc-stream: corrupt_audio: audio file cannot be decoded: (\S+)$/,
  'raw without --format': /^svc-stream: unsupported_format: (\S+): it is headerless raw audio .*--format mulaw --rate 8000 --channels 1/,
};

/** Every command that takes files, with a FILE. */
const FILE_COMMANDS: Record<string, (file: string) => string[]> = {
  analyze: (f) => ['analyze', f],
  dashboard: (f) => ['dashboard', f, '--no-open'],
  relay: (f) => ['relay', f],
  events: (f) => ['events', f],
  emotion: (f) => ['emotion', f],
  'job submit': (f) => ['job', 'submit', f],
  'queue add': (f) => ['queue', 'add', f],
};

/** Exit 2, one line on stderr, nothing on stdout, no emulator started. */
function refusedBeforeStart(r: { code: number; stdout: string; stderr: string }): string {
  expect(r.code, r.stderr).toBe(2);
  expect(r.stdout).toBe('');
  const lines = r.stderr.trimEnd().split('\n');
  expect(lines, r.stderr).toHaveLength(1);
  expect(r.stderr).not.toMatch(/embedded emulator/);
  return lines[0]!;
}

describe('every command that takes files × each bad file', () => {
  for (const [command, argv] of Object.entries(FILE_COMMANDS)) {
    it(`${command}`, async () => {
      const runs = await Promise.all(Object.entries(bad).map(async ([what, file]) => [what, file, await runCli(argv(file))] as const));
      for (const [what, file, r] of runs) {
        const line = refusedBeforeStart(r);
        const m = REFUSALS[what]!.exec(line);
        expect(m, `${command} with a ${what} file: ${line}`).not.toBeNull();
        expect(m![1]).toBe(file);
      }
    });
  }
});

describe('every command that listens × a port in use', () => {
  let tcp: Server;
  let udp: dgram.Socket;
  let tcpPort = 0;
  let udpPort = 0;
  beforeAll(async () => {
    tcp = createServer();
    await new Promise<void>((r) => tcp.listen(0, '127.0.0.1', () => r()));
    tcpPort = (tcp.address() as { port: number }).port;
    udp = dgram.createSocket('udp4');
    await new Promise<void>((r) => udp.bind(0, '127.0.0.1', () => r()));
    udpPort = udp.address().port;
  });
  afterAll(async () => {
    await new Promise((r) => tcp.close(r));
    udp.close();
  });

  const listening: Record<string, () => string[]> = {
    'rtp --port': () => ['rtp', '--port', String(udpPort)],
    'media-stream --port': () => ['media-stream', '--port', String(tcpPort)],
    'relay --port': () => ['relay', SAMPLE, '--port', String(tcpPort)],
    'dashboard --port': () => ['dashboard', SAMPLE, '--no-open', '--port', String(tcpPort)],
    'emulator --port': () => ['emulator', '--port', String(tcpPort)],
    'rtp --metrics-port': () => ['rtp', '--port', '0', '--metrics-port', String(tcpPort)],
    'media-stream --metrics-port': () => ['media-stream', '--port', '0', '--metrics-port', String(tcpPort)],
    'relay --metrics-port': () => ['relay', SAMPLE, '--metrics-port', String(tcpPort)],
    'dashboard --metrics-port': () => ['dashboard', SAMPLE, '--no-open', '--metrics-port', String(tcpPort)],
    'emulator --metrics-port': () => ['emulator', '--metrics-port', String(tcpPort)],
  };
  it.each(Object.keys(listening))('%s', async (name) => {
    const argv = listening[name]!();
    const flag = name.split(' ')[1]!;
    const port = flag === '--port' && argv[0] === 'rtp' ? udpPort : tcpPort;
    const line = refusedBeforeStart(await runCli(argv));
    expect(line).toBe(`svc-stream: port_in_use: ${flag} ${port}: the port is in use (127.0.0.1:${port})`);
  });
});

describe('every flag whose optional package is missing (an install without the optional packages)', () => {
  let lean: string;
  beforeAll(() => {
    // The built package with a node_modules that has everything but the optional packages.
    lean = mkdtempSync(join(tmpdir(), 'svc-lean-'));
    cpSync(join(ROOT, 'dist'), join(lean, 'dist'), { recursive: true });
    cpSync(join(ROOT, 'bin'), join(lean, 'bin'), { recursive: true });
    cpSync(join(ROOT, 'package.json'), join(lean, 'package.json'));
    mkdirSync(join(lean, 'node_modules'));
    const optional = new Set(['ioredis', 'redis-semaphore', 'bullmq', 'prom-client']);
    for (const name of readdirSync(join(ROOT, 'node_modules'))) {
      if (optional.has(name) || name.startsWith('.')) continue;
      symlinkSync(join(ROOT, 'node_modules', name), join(lean, 'node_modules', name));
    }
  });
  afterAll(() => rmSync(lean, { recursive: true, force: true }));

  const run = (argv: readonly string[]): Promise<{ code: number; stdout: string; stderr: string }> =>
    new Promise((resolve) => {
      execFile(process.execPath, [join(lean, 'bin/svc-stream.js'), ...argv], { env: { PATH: process.env['PATH'] }, timeout: 20_000 }, (err, stdout, stderr) =>
        resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
      );
    });
  const REDIS = 'redis://127.0.0.1:1';
  const CASES: ReadonlyArray<readonly [string, readonly string[], string]> = [
    ['analyze --publish', ['analyze', SAMPLE, '--publish', REDIS], '--publish needs ioredis: npm install ioredis'],
    ['analyze --redis', ['analyze', SAMPLE, '--redis', REDIS], '--redis needs ioredis and redis-semaphore: npm install ioredis redis-semaphore'],
    ['rtp --publish', ['rtp', '--port', '0', '--publish', REDIS], '--publish needs ioredis: npm install ioredis'],
    ['rtp --redis', ['rtp', '--port', '0', '--redis', REDIS], '--redis needs ioredis and redis-semaphore: npm install ioredis redis-semaphore'],
    ['rtp --metrics-port', ['rtp', '--port', '0', '--metrics-port', '0'], '--metrics-port needs prom-client: npm install prom-client'],
    ['media-stream --publish', ['media-stream', '--port', '0', '--publish', REDIS], '--publish needs ioredis: npm install ioredis'],
    ['media-stream --redis', ['media-stream', '--port', '0', '--redis', REDIS], '--redis needs ioredis and redis-semaphore: npm install ioredis redis-semaphore'],
    ['media-stream --metrics-port', ['media-stream', '--port', '0', '--metrics-port', '0'], '--metrics-port needs prom-client: npm install prom-client'],
    ['relay --publish', ['relay', SAMPLE, '--publish', REDIS], '--publish needs ioredis: npm install ioredis'],
    ['relay --from', ['relay', '--from', REDIS], '--from needs ioredis: npm install ioredis'],
    ['relay --metrics-port', ['relay', SAMPLE, '--metrics-port', '0'], '--metrics-port needs prom-client: npm install prom-client'],
    ['dashboard --publish', ['dashboard', SAMPLE, '--no-open', '--publish', REDIS], '--publish needs ioredis: npm install ioredis'],
    ['dashboard --redis', ['dashboard', SAMPLE, '--no-open', '--redis', REDIS], '--redis needs ioredis and redis-semaphore: npm install ioredis redis-semaphore'],
    ['dashboard --from', ['dashboard', '--no-open', '--from', REDIS], '--from needs ioredis: npm install ioredis'],
    ['dashboard --metrics-port', ['dashboard', SAMPLE, '--no-open', '--metrics-port', '0'], '--metrics-port needs prom-client: npm install prom-client'],
    ['emulator --metrics-port', ['emulator', '--metrics-port', '0'], '--metrics-port needs prom-client: npm install prom-client'],
    ['events --redis', ['events', SAMPLE, '--redis', REDIS], '--redis needs ioredis and redis-semaphore: npm install ioredis redis-semaphore'],
    ['emotion --redis', ['emotion', SAMPLE, '--redis', REDIS], '--redis needs ioredis and redis-semaphore: npm install ioredis redis-semaphore'],
    ['queue status', ['queue', 'status'], 'svc-stream queue needs bullmq and ioredis: npm install bullmq ioredis'],
  ];
  it('each refused before anything starts, with the install line', async () => {
    // Side by side, four at a time (each is a node process).
    const results: Array<{ code: number; stdout: string; stderr: string }> = [];
    for (let i = 0; i < CASES.length; i += 4) results.push(...(await Promise.all(CASES.slice(i, i + 4).map(([, argv]) => run(argv)))));
    CASES.forEach(([name, , line], i) => {
      const r = results[i]!;
      expect(refusedBeforeStart(r), name).toBe(`svc-stream: missing_dependency: ${line}`);
    });
  }, 60_000);
});
