import { spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { main as mediaStreamBridge } from '../../samples/media-stream-bridge.js';
import { main as rtpBridge } from '../../samples/rtp-bridge.js';

describe('samples', () => {
  it('rtp-bridge: ffmpeg sends 12 s of the call at 8x, the bridge prints roles and transcript', async () => {
    const lines: string[] = [];
    await rtpBridge({ port: 0, spawnFfmpeg: true, speed: 8, seconds: 12, exitAfterCall: true, idleTimeoutMs: 500, print: (l) => lines.push(l) });
    const text = lines.join('\n');
    expect(text).toMatch(/rtp-[0-9a-f]{8}: \[ +0\.0s\] 1: Northwind Bank support/);
    expect(text).toMatch(/roles 1=Agent, 2=Customer/);
    expect(text).toMatch(/: done; packets \d+, lost 0/);
  }, 20_000);

  it.each(['twilio', 'telnyx'] as const)('media-stream-bridge --demo (%s) prints roles and transcript', async (preset) => {
    const lines: string[] = [];
    await mediaStreamBridge({ port: 0, preset, demo: true, speed: 20, seconds: 12, exitAfterCall: true, print: (l) => lines.push(l) });
    const text = lines.join('\n');
    expect(text).toContain(preset === 'twilio' ? 'CAdemo (twilio, inbound): new call' : 'v3:demo-call (telnyx, inbound): new call');
    expect(text).toMatch(/\[ +3\.8s\] 2( \(Customer\))?: Hi\. I've been charged twice/);
    expect(text).toMatch(/: done$/m);
  }, 20_000);

  it('media-stream-bridge takes only connections that carry its token', async () => {
    const lines: string[] = [];
    let refusedStatus: Promise<number> | undefined;
    const print = (line: string): void => {
      lines.push(line);
      const m = /media streams on ws:\/\/[^:]+:(\d+)/.exec(line);
      if (m) {
        // A provider without the token, beside the demo client that has it.
        refusedStatus = new Promise<number>((resolve, reject) => {
          const ws = new WebSocket(`ws://127.0.0.1:${m[1]}`);
          ws.once('unexpected-response', (_req, res) => {
            resolve(res.statusCode ?? 0);
            ws.terminate();
          });
          ws.once('open', () => reject(new Error('a connection without the token was accepted')));
          ws.once('error', () => undefined);
        });
      }
    };
    await mediaStreamBridge({ port: 0, preset: 'twilio', demo: true, token: 'bridge-secret-0001', speed: 20, seconds: 4, exitAfterCall: true, print });
    expect(await refusedStatus).toBe(401);
    const text = lines.join('\n');
    expect(text).toContain('refused a connection: bad_token');
    expect(text).toContain('CAdemo (twilio, inbound): new call');
    expect(text).not.toContain('bridge-secret-0001');
  }, 20_000);

  it('rtp-bridge runs as a script with tsx', async () => {
    const child = spawn('npx', ['tsx', 'samples/rtp-bridge.ts', '--port', '0', '--spawn-ffmpeg', '--speed', '10', '--seconds', '4', '--exit-after-call'], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), 18_000);
    const code = await new Promise<number | null>((r) => child.on('exit', r));
    clearTimeout(timer);
    expect(code).toBe(0);
    expect(out).toMatch(/Northwind Bank support/);
  }, 20_000);
});
