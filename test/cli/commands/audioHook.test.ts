// `svc-stream audiohook`: the server run in-process against the embedded emulator, with its own
// --demo client (signed as Genesys signs) and the test's scripted AudioHook client.
import { PassThrough, Readable } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { main } from '../../../src/cli/main.js';
import { serveCli, stopServing, type Serving } from '../runCli.js';
import { connectPeer, interleave } from '../../telephony/audioHookPeer.js';
import { killSpawned, spawnBin } from '../spawned.js';

afterEach(killSpawned);

afterEach(stopServing);

const start = (args: string[], env: NodeJS.ProcessEnv = {}): Serving => serveCli(['audiohook', '--port', '0', ...args], /AudioHook on ws:\/\/[^:]+:(\d+)/, env);

const ndjson = (text: string) => text.trim().split('\n').map((l) => JSON.parse(l) as Record<string, any>);

describe('svc-stream audiohook', () => {
  it('prints its help', async () => {
    const stdout = new PassThrough();
    let out = '';
    stdout.on('data', (c: Buffer) => (out += c.toString()));
    expect(await main(['audiohook', '--help'], { stdout, stderr: new PassThrough(), stdin: Readable.from([]), env: {} })).toBe(0);
    expect(out).toContain('--audiohook-api-key K');
    expect(out).toContain('--max-gap-fill-ms MS');
  });

  it('--demo: a signed stereo session with a hold, analysed on the embedded emulator; NDJSON per call with the AudioHook notices', async () => {
    const r = start(['--demo', '--speed', '20', '--seconds', '9', '--json']);
    expect(await r.exit).toBe(0);
    const lines = ndjson(r.stdout());
    const call = lines.find((l) => l.type === 'call')!;
    expect(call).toMatchObject({
      participant: { ani: '+1-555-555-0100', aniName: 'Demo Caller' },
      language: 'en-US',
      media: { format: 'PCMU', channels: ['external', 'internal'], rate: 8000 },
      channels: ['external', 'internal'],
      format: { audio_format: 'mulaw', sample_rate: 8000, num_channels: 2 },
    });
    const notices = lines.filter((l) => l.type === 'audiohook').map((l) => l.notice);
    expect(notices).toEqual([
      { type: 'paused', atMs: 3000 },
      { type: 'resumed', gap: { cause: 'paused', atMs: 3000, durationMs: 2000, filled: true } },
      { type: 'ended', end: { how: 'closed', reason: 'end' } },
    ]);
    // The call's 9 s, its hold filled with silence: the session keeps the call's time.
    expect(lines.find((l) => l.type === 'call_end')).toMatchObject({ id: call.id, status: 'done', duration_ms: 9000, stats: { paused_ms: 2000, filled_ms: 2000 } });
    // Both sides, a speaker per channel: the customer on channel 1.
    const speakers = new Set(lines.filter((l) => l.type === 'event' && l.event.type === 'clip').map((l) => l.event.clip.speaker_label));
    expect([...speakers].sort()).toEqual(['1', '2']);
    expect(lines.at(-1)).toMatchObject({ type: 'state', id: call.id, source: 'scenario' });
  }, 30_000);

  it('a connection that fails authentication is refused (401) and said on stderr without its key; nothing is analysed', async () => {
    const r = start(['--exit-after', '1'], { AUDIOHOOK_API_KEY: 'the-right-key', AUDIOHOOK_CLIENT_SECRET: Buffer.from('a secret').toString('base64') });
    const url = `ws://127.0.0.1:${await r.port}/`;
    await expect(connectPeer(url, { sessionId: '30b0e395-84d3-4570-ac13-9a62d8f514c0', apiKey: 'a-wrong-key' })).rejects.toMatchObject({ status: 401 });
    await expect(connectPeer(url, { sessionId: '30b0e395-84d3-4570-ac13-9a62d8f514c0', apiKey: 'the-right-key', clientSecret: Buffer.from('not it').toString('base64') })).rejects.toMatchObject({ status: 401 });
    r.stop();
    expect(await r.exit).toBe(0);
    expect(r.stderr()).toMatch(/refused a connection from 127\.0\.0\.1: unknown_api_key \(the X-API-KEY is not one of the keys configured\)/);
    expect(r.stderr()).toMatch(/refused a connection from 127\.0\.0\.1: bad_signature \(the signature does not match\)/);
    expect(r.stderr()).not.toContain('the-right-key');
    // No call: only the line saying where results would come from.
    expect(r.stdout()).toBe('source: emulator: speech segments only (no transcription: clips without text; try --scenario)\n');
  });

  it('listening beyond loopback without a key is refused before anything starts (exit 2)', async () => {
    const stderr = new PassThrough();
    let err = '';
    stderr.on('data', (c: Buffer) => (err += c.toString()));
    expect(await main(['audiohook', '--host', '0.0.0.0'], { stdout: new PassThrough(), stderr, stdin: Readable.from([]), env: {} })).toBe(2);
    expect(err).toMatch(/invalid_argument: listening on 0\.0\.0\.0 needs --audiohook-api-key/);
  });
});

describe('svc-stream audiohook --workers', () => {
  it('deals the sessions to two worker processes; every call ends done; the totals on stderr count both', async () => {
    const key = 'workers-key';
    const run = spawnBin(['audiohook', '--port', '0', '--workers', '2', '--audiohook-api-key', key, '--max-calls', '4', '--exit-after', '2', '--json']);
    const child = run.child;
    const port = await new Promise<number>((resolve, reject) => {
      const check = (): void => {
        const m = /AudioHook on ws:\/\/[^:]+:(\d+)/.exec(run.err());
        if (m) resolve(Number(m[1]));
        else if (child.exitCode !== null) reject(new Error(run.err()));
      };
      child.stderr!.on('data', check);
      child.once('exit', check);
    });
    const url = `ws://127.0.0.1:${port}/`;
    const session = async (id: string): Promise<void> => {
      const c = await connectPeer(url, { sessionId: id, apiKey: key });
      c.open();
      await c.next();
      for (let i = 0; i < 3; i++) c.audio(interleave(new Uint8Array(1600).fill(0x7f), new Uint8Array(1600).fill(0xff)));
      c.send('close', { reason: 'end' });
      await c.next();
      c.ws.close();
      await c.closed;
    };
    await Promise.all([session('11111111-2222-4333-8444-555555555501'), session('11111111-2222-4333-8444-555555555502')]);
    expect(await new Promise<number | null>((r) => child.once('close', r))).toBe(0);
    const ends = ndjson(run.out()).filter((l) => l.type === 'call_end');
    expect(ends.map((e) => [e.id, e.status, e.duration_ms]).sort()).toEqual([
      ['11111111-2222-4333-8444-555555555501', 'done', 600],
      ['11111111-2222-4333-8444-555555555502', 'done', 600],
    ]);
    expect(run.err()).toMatch(/worker 0 started[\s\S]*worker 1 started|worker 1 started[\s\S]*worker 0 started/);
    expect(run.err()).toMatch(/2 call\(s\): 2 done, 0 failed \(0 lost with a worker\), 0 shutdown, 0 rejected; 0 worker restart\(s\); connections 2, closed 2, disconnected 0, lost 0, unauthorized 0, overCapacity 0, refusedDraining 0/);
  }, 60_000);
});
