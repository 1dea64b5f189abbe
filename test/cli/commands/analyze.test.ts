// The `svc-stream` dispatcher and the analyze and emulator commands, run in-process with
// injected I/O against the embedded emulator, and the real bin once as a user runs it.
import { execFile } from 'node:child_process';
import { copyFileSync, createReadStream, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { PassThrough, Readable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { startEmulator, type RunningEmulator } from 'svc-stream/emulator';
import { ServerEventSchema } from 'svc-stream/schema';
import { main } from '../../../src/cli/main.js';
import { runCli } from '../runCli.js';

const root = fileURLToPath(new URL('../../../', import.meta.url));
const sample = (name: string): string => join(root, 'samples', name);

const run = runCli;

const lines = (text: string): unknown[] => text.trim().split('\n').map((l) => JSON.parse(l) as unknown);

let emulators: RunningEmulator[] = [];
afterEach(async () => {
  await Promise.all(emulators.map((e) => e.close()));
  emulators = [];
});

describe('svc-stream', () => {
  it('--help lists every command and exits 0; no command prints help and exits 2', async () => {
    const help = await run(['--help']);
    expect(help.code).toBe(0);
    for (const name of ['analyze', 'dashboard', 'events', 'emotion', 'presets', 'job', 'rtp', 'emulator']) expect(help.stdout).toContain(`  ${name}`);
    expect((await run([])).code).toBe(2);
  });

  it('an unknown command exits 2 naming it', async () => {
    const r = await run(['analyse']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("unknown command 'analyse'");
  });
});

describe('svc-stream analyze', () => {
  it('--json prints one line per event and, last, the whole derived state', async () => {
    const r = await run(['analyze', sample('call.wav'), '--json', '--config', sample('call.config.json')]);
    expect(r.code).toBe(0);
    expect(r.stderr).toContain('using the embedded emulator');
    const out = lines(r.stdout) as Array<Record<string, unknown>>;
    const state = out.at(-1)!;
    expect(out.at(-2)).toEqual({ type: 'done', duration_ms: 38507 });
    expect(state['type']).toBe('state');
    expect(Object.keys(state).sort()).toEqual(['behaviors', 'clips', 'conversation_type', 'duration_ms', 'label', 'roles', 'session', 'source', 'summary', 'topic_sentiments', 'topics', 'type']);
    // What made the results comes first, before any event, and again on the state line.
    expect(out[0]).toEqual({ type: 'label', source: 'scenario', file: 'call.scenario.json', text: 'scenario call.scenario.json (scripted results, not an analysis of this audio)' });
    expect(out.filter((l) => l['type'] === 'label')).toHaveLength(1);
    expect(state['label']).toEqual({ source: 'scenario', file: 'call.scenario.json' });
    // The session's account: no reconnect, the whole file sent once, nothing replayed or dropped.
    expect(state['session']).toMatchObject({ status: 'done', reconnects: 0, reconnecting_ms: 0, audio_replayed_ms: 0, audio_dropped_ms: 0, bytes_replayed: 0, bytes_dropped: 0 });
    expect(Math.abs((state['session'] as { audio_sent_ms: number }).audio_sent_ms - 38507)).toBeLessThan(5);
    // The sample call's scenario was played: scripted results, and the state line says so.
    expect(state['source']).toBe('scenario');
    expect(state['duration_ms']).toBe(38507);
    expect((state['conversation_type'] as { name: string }).name).toBe('Billing dispute');
    const roles = state['roles'] as Record<string, { name: string }>;
    expect(roles['1']!.name).toBe('Agent');
    expect(roles['2']!.name).toBe('Customer');
    expect(state['topics']).toEqual(['Duplicate charge', 'Refund']);
    expect((state['clips'] as unknown[]).length).toBe(10);
    expect((state['behaviors'] as unknown[]).length).toBe(5);
    expect(typeof state['summary']).toBe('string');
    // Every event line is a normalised server event.
    for (const e of out.slice(1, -1)) expect(ServerEventSchema.safeParse(e).success, JSON.stringify(e)).toBe(true);
  });

  it('piped, it prints one plain line per event and exits 0 after done', async () => {
    const r = await run(['analyze', sample('call.wav')]);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("1: Northwind Bank support, this is Sam. How can I help?");
    expect(r.stdout).toContain('conversation type: Customer support (inferred)');
    expect(r.stdout.trim().split('\n').at(-1)).toBe('done: 38.5 s of audio');
    expect(r.stdout.split('\n')[0]).toMatch(/^source: scenario .*call\.scenario\.json \(scripted results, not an analysis of this audio\)$/);
  });

  it('says when the emulator only found speech segments: on your own audio without a scenario, in --json, piped and on a terminal', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'svc-cli-'));
    try {
      const own = join(dir, 'mine.wav');
      copyFileSync(sample('call.wav'), own);
      const json = await run(['analyze', own, '--json']);
      expect(json.code).toBe(0);
      const label = { source: 'emulator', note: 'speech segments only (no transcription: clips without text; try --scenario)' };
      expect(lines(json.stdout)[0]).toMatchObject({ type: 'label', ...label });
      expect(lines(json.stdout).at(-1)).toMatchObject({ type: 'state', source: 'emulator', label });
      const piped = await run(['analyze', own]);
      expect(piped.stdout.split('\n')[0]).toBe('source: emulator: speech segments only (no transcription: clips without text; try --scenario)');
      const tty = await run(['analyze', own], { tty: true });
      expect(tty.stdout.split('── summary').at(-1)).toMatch(/source\s+emulator: speech segments only/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('a connection dropped mid-call: one line per reconnect, then one transcript on one time axis', async () => {
    let n = 0;
    const scenario = JSON.parse((await import('node:fs')).readFileSync(sample('call.scenario.json'), 'utf8')) as Record<string, unknown>;
    const emu = await startEmulator({ scenario: () => (n++ === 0 ? { ...scenario, faults: [{ at: 'audio', at_ms: 12_000, action: 'drop' }] } : scenario) });
    emulators.push(emu);
    const r = await run(['analyze', sample('call.wav'), '--config', sample('call.config.json')], { tty: true, env: { SVC_BASE_URL: emu.baseUrl, SVC_API_KEY: emu.apiKey } });
    expect(r.code).toBe(0);
    expect(r.stderr).toMatch(/connection failed \(connection_lost\); reconnecting \(attempt 1\)/);
    expect(r.stderr).toContain('reconnected (segment 1');
    const end = r.stdout.split('── transcript (10 clips)').at(-1)!;
    expect(end).toMatch(/session\s+done, 0:38\.5 of audio in .*, 1 reconnect \(/);
  });

  it('--json after a dropped connection: the state line carries the reconnect, its time, the audio replayed and dropped', async () => {
    let n = 0;
    const scenario = JSON.parse(readFileSync(sample('call.scenario.json'), 'utf8')) as Record<string, unknown>;
    const emu = await startEmulator({ scenario: () => (n++ === 0 ? { ...scenario, faults: [{ at: 'audio', at_ms: 12_000, action: 'drop' }] } : scenario) });
    emulators.push(emu);
    const r = await run(['analyze', sample('call.wav'), '--json'], { env: { SVC_BASE_URL: emu.baseUrl, SVC_API_KEY: emu.apiKey } });
    expect(r.code).toBe(0);
    const session = (lines(r.stdout).at(-1) as { session: Record<string, number | string> }).session;
    expect(session).toMatchObject({ status: 'done', reconnects: 1, audio_dropped_ms: 0, bytes_dropped: 0 });
    expect(session['reconnecting_ms']).toBeGreaterThanOrEqual(0);
    expect(session['bytes_replayed']).toBeGreaterThan(0);
    expect(session['audio_replayed_ms']).toBeGreaterThan(0);
    // Sent once: the whole file (what a reconnect sent again is counted apart).
    expect(Math.abs((session['audio_sent_ms'] as number) - 38507)).toBeLessThan(5);
  });

  it('on a terminal, it never clears the screen and ends on the complete transcript and summary', async () => {
    const r = await run(['analyze', sample('call.wav'), '--config', sample('call.config.json')], { tty: true });
    expect(r.code).toBe(0);
    expect(r.stdout).not.toContain('\x1b[2J');
    const end = r.stdout.split('── transcript (10 clips)').at(-1)!;
    expect(end).toContain('roles      1=Agent  2=Customer');
    expect(end).toMatch(/session\s+done, 0:38\.5 of audio/);
  });

  it('--record writes a recording that emulator --scenario replays to the same final state, without the key or URL', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'svc-cli-'));
    try {
      const file = join(dir, 'call.ndjson');
      const recorded = await run(['analyze', sample('call.wav'), '--json', '--config', sample('call.config.json'), '--record', file]);
      expect(recorded.code).toBe(0);
      const text = readFileSync(file, 'utf8');
      expect(text.split('\n')[0]).toBe('{"type":"svc-stream-recording","version":1}');
      expect(text).not.toMatch(/https?:\/\/|wss?:\/\//);
      const controller = new AbortController();
      let replayed: Awaited<ReturnType<typeof run>> | undefined;
      const emulator = await runCli(['emulator', '--scenario', file], {
        signal: controller.signal,
        whileRunning: async (stdout) => {
          while (!stdout().includes('SVC_API_KEY=')) await new Promise((r) => setTimeout(r, 20));
          const env = Object.fromEntries(stdout().trim().split('\n').map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]));
          expect(text).not.toContain(env['SVC_API_KEY']);
          replayed = await run(['analyze', sample('call.wav'), '--json', '--config', sample('call.config.json')], { env });
          controller.abort();
        },
      });
      expect(emulator.code).toBe(0);
      expect(replayed!.code).toBe(0);
      const { source: a, label: la, session: sa, ...first } = lines(recorded.stdout).at(-1) as Record<string, unknown>;
      const { source: b, label: lb, session: sb, ...second } = lines(replayed!.stdout).at(-1) as Record<string, unknown>;
      // The replaying emulator runs elsewhere; its answers say what it plays: the recording, by its file's name.
      expect([a, b]).toEqual(['scenario', 'recording']);
      expect([la, lb]).toEqual([{ source: 'scenario', file: 'call.scenario.json' }, { source: 'recording', file: basename(file) }]);
      expect(second).toEqual(first);
      // The same audio account, in another wall time.
      const { wall_ms: _wa, ...accountA } = sa as Record<string, unknown>;
      const { wall_ms: _wb, ...accountB } = sb as Record<string, unknown>;
      expect(accountB).toEqual(accountA);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('reads raw audio from stdin with --format/--rate/--channels', async () => {
    const r = await run(['analyze', '-', '--format', 'mulaw', '--rate', '8000', '--channels', '1', '--json', '--scenario', sample('call.scenario.json')], {
      stdin: createReadStream(sample('call-8k.mulaw')),
    });
    expect(r.code).toBe(0);
    const state = lines(r.stdout).at(-1) as { duration_ms: number; clips: unknown[] };
    expect(Math.abs(state.duration_ms - 38507)).toBeLessThan(5);
    expect(state.clips.length).toBe(10);
  });

  it('stdin without --format is a usage error, exit 2', async () => {
    const r = await run(['analyze', '-']);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/^svc-stream: invalid_argument: reading stdin needs --format/);
  });

  it('an invalid config file fails before connecting, with its code and path', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'svc-cli-'));
    try {
      const bad = join(dir, 'bad.json');
      writeFileSync(bad, JSON.stringify({ behaviors: ['cheerfulness'] }));
      const r = await run(['analyze', sample('call.wav'), '--config', bad]);
      expect(r.code).toBe(2);
      expect(r.stderr).toMatch(/^svc-stream: invalid_config: invalid config at behaviors\.0/);
      expect(r.stderr).not.toContain('embedded emulator');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('a missing, empty or non-audio file is refused before anything starts: exit 2, one line naming it, no source line', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'svc-cli-'));
    try {
      const empty = join(dir, 'empty.wav');
      writeFileSync(empty, '');
      const text = join(dir, 'notes.wav');
      writeFileSync(text, 'these are notes, not audio\n'.repeat(100));
      for (const [file, line] of [
        ['no/such/call.wav', /^svc-stream: file_not_found: no\/such\/call\.wav: no such file\n$/],
        [empty, /^svc-stream: empty_file: .*empty\.wav: the file is empty\n$/],
        [text, /^svc-stream: corrupt_audio: audio file cannot be decoded: .*notes\.wav\n/],
      ] as const) {
        const r = await run(['analyze', file]);
        expect(r.code).toBe(2);
        expect(r.stderr).toMatch(line);
        expect(r.stderr).not.toContain('embedded emulator');
        expect(r.stdout).toBe('');
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('--speed fast names the flag, before anything starts', async () => {
    const r = await run(['analyze', sample('call.wav'), '--speed', 'fast']);
    expect(r.code).toBe(2);
    expect(r.stderr.split('\n')[0]).toBe("svc-stream: invalid_argument: --speed expects a number > 0, got 'fast'");
  });

  it('with SVC_BASE_URL and a wrong SVC_API_KEY it fails with invalid_api_key, and never prints the key', async () => {
    const emu = await startEmulator();
    emulators.push(emu);
    const key = 'sk-cli-secret-0123456789';
    const r = await run(['analyze', sample('call.wav')], { env: { SVC_BASE_URL: emu.baseUrl, SVC_API_KEY: key } });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/^svc-stream: invalid_api_key: session closed with 4001/);
    expect(r.stderr).not.toContain('using the embedded emulator');
    expect(r.stdout + r.stderr).not.toContain(key);
  });

  it('Ctrl-C ends a live session with aborted', async () => {
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 300);
    const r = await run(['analyze', sample('call.wav'), '--realtime'], { signal: controller.signal });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('svc-stream: aborted: interrupted');
  });
});

describe('svc-stream emulator', () => {
  it('prints the KEY=value lines first and stops on Ctrl-C', async () => {
    const controller = new AbortController();
    const stdout = new PassThrough();
    let out = '';
    const printed = new Promise<void>((resolve) =>
      stdout.on('data', (c: Buffer) => {
        out += c.toString();
        if (out.split('\n').length > 5) resolve();
      }),
    );
    const done = main(['emulator'], { stdout, stderr: new PassThrough(), stdin: Readable.from([]), env: {}, signal: controller.signal });
    await printed;
    const env = Object.fromEntries(out.trim().split('\n').map((l) => l.split('=') as [string, string]));
    expect(Object.keys(env)).toEqual(['SVC_BASE_URL', 'SVC_API_KEY', 'SVC_PLATFORM_URL', 'SVC_ACCOUNT_UUID', 'SVC_PLATFORM_API_KEY']);
    const res = await fetch(`${env['SVC_BASE_URL']}/api/svc-2-streaming/list-presets`, { headers: { 'X-API-Key': env['SVC_API_KEY']! } });
    expect(res.status).toBe(200);
    controller.abort();
    expect(await done).toBe(0);
  });
});

describe('the installed bin', () => {
  it('`svc-stream analyze samples/call.wav --json | tail -1` prints the state line', async () => {
    const stdout = await new Promise<string>((resolve, reject) => {
      const child = execFile(process.execPath, [join(root, 'bin/svc-stream.js'), 'analyze', 'samples/call.wav', '--json'], { cwd: root, env: { PATH: process.env['PATH'] }, timeout: 30_000 }, (err, out) =>
        err ? reject(err) : resolve(out),
      );
      child.stdin?.end();
    });
    const last = JSON.parse(stdout.trim().split('\n').at(-1)!) as { type: string; duration_ms: number };
    expect(last.type).toBe('state');
    expect(last.duration_ms).toBe(38507);
  });
});
