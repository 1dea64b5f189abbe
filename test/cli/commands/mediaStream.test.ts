// `svc-stream media-stream`: the bridge run in-process against the embedded emulator, with real
// WebSocket clients speaking the Twilio protocol (and the command's own --demo client).
import { readFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { samplePath } from 'svc-stream';
import { twilioSignature } from 'svc-stream/telephony';
import { serveCli, stopServing, type Serving } from '../runCli.js';
import { killSpawned, spawnBin } from '../spawned.js';

afterEach(killSpawned);

afterEach(stopServing);

const start = (args: string[], env: NodeJS.ProcessEnv = {}): Serving => serveCli(['media-stream', '--port', '0', ...args], /media streams on ws:\/\/[^:]+:(\d+)/, env);

const ndjson = (text: string) => text.trim().split('\n').map((l) => JSON.parse(l) as Record<string, any>);

/** A Twilio media stream of `ms` of the sample call, as Twilio sends it (numbers as strings); resolves with the close code. */
async function twilioCall(url: string, headers: Record<string, string>, sid: string, ms: number): Promise<number> {
  const mulaw = readFileSync(samplePath('call-8k.mulaw')).subarray(0, ms * 8);
  const ws = new WebSocket(url, { headers });
  await new Promise((resolve, reject) => ws.once('open', resolve).once('error', reject));
  const closed = new Promise<number>((resolve) => ws.once('close', (code) => resolve(code)));
  let seq = 1;
  const send = (event: string, body: object) => ws.send(JSON.stringify({ event, sequenceNumber: String(seq++), streamSid: sid, ...body }));
  ws.send(JSON.stringify({ event: 'connected', protocol: 'Call', version: '1.0.0' }));
  send('start', { start: { streamSid: sid, accountSid: 'ACtest', callSid: `CA${sid}`, tracks: ['inbound'], mediaFormat: { encoding: 'audio/x-mulaw', sampleRate: 8000, channels: 1 } } });
  for (let k = 0; k * 160 < mulaw.length; k++) {
    send('media', { media: { track: 'inbound', chunk: String(k + 1), timestamp: String(k * 20), payload: mulaw.subarray(k * 160, (k + 1) * 160).toString('base64') } });
  }
  send('stop', { stop: { accountSid: 'ACtest', callSid: `CA${sid}` } });
  // The close frame follows the stop on the same socket: the bridge reads everything before it.
  ws.close();
  return closed;
}

/** How the bridge answers an upgrade: 101 or the refusal's status. */
function upgradeStatus(url: string, headers: Record<string, string> = {}): Promise<number> {
  return new Promise((resolve) => {
    const ws = new WebSocket(url, { headers });
    ws.on('unexpected-response', (_req, res) => {
      res.resume();
      ws.terminate();
      resolve(res.statusCode ?? 0);
    });
    ws.on('open', () => {
      ws.close();
      resolve(101);
    });
    ws.on('error', () => undefined);
  });
}

describe('svc-stream media-stream', () => {
  it('--demo streams the sample call as a Twilio media stream, end to end: NDJSON like analyze, with a state line per call', async () => {
    const r = start(['--demo', '--speed', '40', '--json']);
    expect(await r.exit).toBe(0);
    const lines = ndjson(r.stdout());
    expect(lines[0]).toMatchObject({ type: 'call', preset: 'twilio', track: 'inbound', call_id: 'CAdemo', format: { audio_format: 'mulaw', sample_rate: 8000, num_channels: 1 } });
    expect(lines.filter((l) => l['type'] === 'event').length).toBeGreaterThan(20);
    expect(lines.find((l) => l['type'] === 'call_end')).toMatchObject({ status: 'done' });
    const state = lines.at(-1)!;
    expect(state).toMatchObject({ type: 'state', source: 'scenario', label: { source: 'scenario', file: 'call.scenario.json' } });
    expect(Object.values(state['roles'] as Record<string, { name: string }>).map((p) => p.name).sort()).toEqual(['Agent', 'Customer']);
    expect((state['clips'] as unknown[]).length).toBe(10);
    expect(r.stderr()).not.toMatch(/warning: no --token/);
  }, 60_000);

  it('plain output: the live view lines, prefixed with the call id', async () => {
    const r = start(['--demo', '--speed', '40', '--seconds', '8']);
    expect(await r.exit).toBe(0);
    expect(r.stdout()).toMatch(/^MZdemo0+:inbound call CAdemo \(twilio, track inbound, mulaw\/8000\), /m);
    // The scenario follows its audio: the call's label comes once its audio was heard, before its first result.
    const out = r.stdout().split('\n');
    const source = out.findIndex((l) => l.startsWith('source: '));
    expect(out[source]).toBe('source: scenario call.scenario.json (scripted results, not an analysis of this audio)');
    expect(source).toBeLessThan(out.findIndex((l) => / \[ +0\.0s\] /.test(l)));
    expect(out.filter((l) => l.startsWith('source: '))).toHaveLength(1);
    expect(r.stdout()).toMatch(/^MZdemo0+:inbound \[ +0\.0s\] 1: Northwind Bank support/m);
    expect(r.stdout()).toMatch(/^MZdemo0+:inbound role: speaker 1 is Agent$/m);
    expect(r.stdout()).toMatch(/^MZdemo0+:inbound done \(received \d+, lost 0/m);
  }, 60_000);

  it('verifies the Twilio signature: a real ws client signing its URL gets in, an unsigned or wrongly signed one is refused with 401', async () => {
    const authToken = 'twilio-auth-token-for-tests';
    const r = start(['--twilio-auth-token', authToken, '--exit-after', '1', '--json', '--scenario', samplePath('call.scenario.json')]);
    const port = await r.port;
    const url = `ws://127.0.0.1:${port}/stream`;
    const signedOver = `wss://127.0.0.1:${port}/stream`;
    expect(await upgradeStatus(url)).toBe(401);
    expect(await upgradeStatus(url, { 'x-twilio-signature': twilioSignature('another-token', signedOver) })).toBe(401);
    await twilioCall(url, { 'x-twilio-signature': twilioSignature(authToken, signedOver) }, 'MZsigned', 3000);
    expect(await r.exit).toBe(0);
    expect(r.stderr()).toMatch(/refused a connection from .*: bad_signature/);
    expect(ndjson(r.stdout()).find((l) => l['type'] === 'call_end')).toMatchObject({ id: 'MZsigned:inbound', status: 'done' });
  }, 60_000);

  it('refuses a connection without the token (401), admits one with it', async () => {
    const r = start(['--token', 'bridge-secret-123', '--exit-after', '1', '--json']);
    const port = await r.port;
    const url = `ws://127.0.0.1:${port}/`;
    expect(await upgradeStatus(url)).toBe(401);
    expect(await upgradeStatus(`${url}?token=wrong`)).toBe(401);
    await twilioCall(url, { authorization: 'Bearer bridge-secret-123' }, 'MZtoken', 2000);
    expect(await r.exit).toBe(0);
    expect(r.stderr()).toMatch(/bad_token/);
    expect(ndjson(r.stdout()).at(-1)).toMatchObject({ type: 'state', id: 'MZtoken:inbound', source: 'emulator', label: { source: 'emulator', note: expect.stringMatching(/^speech segments only/) } });
  }, 60_000);

  it('one call refused for capacity does not end the bridge: the other call is analysed', async () => {
    const r = start(['--token', 't0ken-t0ken', '--max-calls', '1', '--when-full', 'reject', '--exit-after', '2', '--json']);
    const port = await r.port;
    const url = `ws://127.0.0.1:${port}/`;
    const auth = { authorization: 'Bearer t0ken-t0ken' };
    await Promise.all([twilioCall(url, auth, 'MZone', 3000), twilioCall(url, auth, 'MZtwo', 3000)]);
    expect(await r.exit).toBe(0);
    const ends = ndjson(r.stdout()).filter((l) => l['type'] === 'call_end').map((l) => l['status'] as string);
    expect(ends.sort()).toEqual(['done', 'rejected']);
  }, 60_000);

  it('--max-connections refuses a provider connection over the limit with 1013, says once which flag raises it, and the admitted call goes on', async () => {
    const r = start(['--token', 't0ken-t0ken', '--max-connections', '1', '--frame-ms', '100', '--exit-after', '1', '--json']);
    const port = await r.port;
    const url = `ws://127.0.0.1:${port}/`;
    const auth = { authorization: 'Bearer t0ken-t0ken' };
    const refused = (): Promise<number> =>
      new Promise((resolve) => {
        const extra = new WebSocket(url, { headers: auth });
        extra.on('close', (code) => resolve(code));
        extra.on('error', () => undefined);
      });
    // The admitted provider holds its connection open while two more try to connect.
    const held = new WebSocket(url, { headers: auth });
    await new Promise((resolve, reject) => held.once('open', resolve).once('error', reject));
    expect(await Promise.all([refused(), refused()]), r.stderr()).toEqual([1013, 1013]);
    held.close();
    await new Promise((resolve) => held.once('close', resolve));
    await twilioCall(url, auth, 'MZcap', 2000);
    expect(await r.exit).toBe(0);
    expect(r.stderr().match(/Raise --max-connections/g)).toHaveLength(1);
    expect(ndjson(r.stdout()).find((l) => l['type'] === 'call_end')).toMatchObject({ id: 'MZcap:inbound', status: 'done' });
  }, 30_000);

  it('a bad --frame-ms is a usage error naming the bound', async () => {
    const r = start(['--frame-ms', 'soon']);
    expect(await r.exit).toBe(2);
    expect(r.stderr()).toMatch(/--frame-ms expects an integer ≥ 0, got 'soon'/);
  });

  it('will not listen beyond loopback without a token or Twilio auth', async () => {
    const r = start(['--host', '0.0.0.0']);
    expect(await r.exit).toBe(2);
    expect(r.stderr()).toMatch(/^svc-stream: invalid_argument: listening on 0\.0\.0\.0 needs --token/);
  });
});

describe('svc-stream media-stream --workers', () => {
  it('deals the connections run.out() to two worker processes; --max-connections holds across them; every call done, totals on stderr', async () => {
    const run = spawnBin(['media-stream', '--port', '0', '--workers', '2', '--token', 't0ken-t0ken', '--max-calls', '10', '--max-connections', '4', '--exit-after', '4', '--json']);
    const child = run.child;
    try {
      const port = await new Promise<number>((resolve, reject) => {
        const check = (): void => {
          const m = /media streams on ws:\/\/[^:]+:(\d+)/.exec(run.err());
          if (m) resolve(Number(m[1]));
          else if (child.exitCode !== null) reject(new Error(run.err()));
        };
        child.stderr!.on('data', check);
        child.once('exit', check);
      });
      const url = `ws://127.0.0.1:${port}/`;
      const headers = { authorization: 'Bearer t0ken-t0ken' };
      // Four calls at once fill --max-connections across both workers; a fifth is refused with 1013.
      const open = Array.from({ length: 4 }, () => new WebSocket(url, { headers }));
      await Promise.all(open.map((ws) => new Promise((resolve, reject) => ws.once('open', resolve).once('error', reject))));
      const fifth = await new Promise<number>((resolve) => new WebSocket(url, { headers }).once('close', (code) => resolve(code)).on('error', () => undefined));
      expect(fifth).toBe(1013);
      await Promise.all(open.map((ws) => new Promise((resolve) => (ws.once('close', resolve), ws.close()))));
      // The places come back once the workers have told the primary: until then a call may still
      // be refused with 1013, as a provider's would be; each call goes again until it is taken.
      let refusedAgain = 0;
      const callWhenAdmitted = async (sid: string): Promise<void> => {
        // A refused call is closed with 1013 by the bridge; it goes again.
        while ((await twilioCall(url, headers, sid, 600)) === 1013) refusedAgain++;
      };
      for (const sid of ['MZa', 'MZb', 'MZc', 'MZd']) await callWhenAdmitted(sid);
      const code = await new Promise<number | null>((r) => child.once('close', r));
      expect(code).toBe(0);
      const ends = ndjson(run.out()).filter((l) => l['type'] === 'call_end');
      expect(ends.map((e) => [e['id'], e['status']]).sort()).toEqual([
        ['MZa:inbound', 'done'],
        ['MZb:inbound', 'done'],
        ['MZc:inbound', 'done'],
        ['MZd:inbound', 'done'],
      ]);
      expect(run.err()).toMatch(/worker 0 started[\s\S]*worker 1 started|worker 1 started[\s\S]*worker 0 started/);
      // Every refusal is counted once: the fifth call's, and each of the retries' above.
      const summary = /svc-stream: 4 call\(s\): 4 done, 0 failed \(0 lost with a worker\), 0 shutdown, 0 rejected; 0 worker restart\(s\); connections \d+, messages \d+, malformed 0, overCapacity (\d+), refusedDraining 0\n$/.exec(run.err());
      expect(summary, run.err()).not.toBeNull();
      expect(Number(summary![1])).toBe(1 + refusedAgain);
    } finally {
      child.kill('SIGKILL');
    }
  }, 60_000);
});
