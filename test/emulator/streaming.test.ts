// The conversation socket's states and moves (§3) and every close code (§7.3), each
// non-normal close preceded by an `error` event, driven by a plain `ws` client.
import { describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { GOING_AWAY_CLOSE_CODE, startEmulator, STREAMING_ERRORS } from 'svc-stream/emulator';
import { connectionsEnded, ofType, runSession, sample, wavBody, withEmulator, wsUrl, type SessionResult } from './helpers.js';

const PATH = '/api/svc-2-streaming';
const RAW = { audio_format: 's16le', sample_rate: 16000, num_channels: 1 };
/** Two seconds of the call as raw s16le: enough for a clip, fast to stream. */
const SHORT = wavBody(sample('call.wav')).subarray(0, 2 * 32000);

function expectRefused(r: SessionResult, code: number, error: string | RegExp): void {
  expect(r.closeCode).toBe(code);
  const last = r.frames.at(-1);
  expect(last?.type).toBe('error');
  if (typeof error === 'string') expect(last?.['error']).toBe(error);
  else expect(String(last?.['error'])).toMatch(error);
  expect(ofType(r.frames, 'done')).toHaveLength(0);
}

describe('handshake: authentication and limits', () => {
  it('closes 4001 after an error event for an unknown key, and for a missing key', async () => {
    await withEmulator({}, async (emu) => {
      expectRefused(await runSession(wsUrl(emu, PATH, {}, 'nope'), { config: 'default' }), 4001, 'Invalid API key.');
      expectRefused(await runSession(wsUrl(emu, PATH, {}, null), { config: 'default' }), 4001, 'Invalid API key.');
    });
  });

  it('closes 4003 when the organization lacks the model', async () => {
    await withEmulator({ organizations: [{ keys: ['k'], models: ['emotion'] }], apiKey: 'k' }, async (emu) => {
      expectRefused(await runSession(wsUrl(emu, PATH), { config: 'default' }), 4003, 'This API key does not have access to this model.');
    });
  });

  it('closes 4029 for the monthly usage quota, the monthly credit limit and insufficient credits', async () => {
    const orgs = [
      { keys: ['quota'], monthlyUsageQuotaMs: { conversation: 1000 } },
      { keys: ['limit'], monthlyCreditLimit: 0 },
      { keys: ['broke'], credits: 0 },
    ];
    await withEmulator({ organizations: orgs, apiKey: 'quota' }, async (emu) => {
      // The quota is not reached yet: this session uses 2 s of it.
      const first = await runSession(wsUrl(emu, PATH, RAW, 'quota'), { config: 'default', audio: SHORT });
      expect(first.closeCode).toBe(1000);
      await connectionsEnded(emu, 1);
      expectRefused(await runSession(wsUrl(emu, PATH, RAW, 'quota'), { config: 'default' }), 4029, 'Monthly usage limit reached.');
      expectRefused(await runSession(wsUrl(emu, PATH, RAW, 'limit'), { config: 'default' }), 4029, 'Monthly credit limit reached.');
      expectRefused(await runSession(wsUrl(emu, PATH, RAW, 'broke'), { config: 'default' }), 4029, 'Insufficient credits.');
    });
  });

  it('closes 4030 when one more socket than the concurrency opens, and admits again once one closes', async () => {
    await withEmulator({ organizations: [{ keys: ['k'], concurrency: 2 }], apiKey: 'k' }, async (emu) => {
      const open = (): Promise<WebSocket> =>
        new Promise((resolve, reject) => {
          const ws = new WebSocket(wsUrl(emu, PATH));
          ws.once('open', () => resolve(ws));
          ws.once('error', reject);
        });
      const a = await open();
      const b = await open();
      // The server admitted both (its own counter) before the third arrives.
      await expect.poll(() => emu.accounts.organizations[0]!.inFlight.conversation).toBe(2);
      const third = await runSession(wsUrl(emu, PATH), { config: 'default' });
      expectRefused(third, 4030, /Concurrent request limit reached/);
      expect(emu.accounts.organizations[0]!.peakInFlight.conversation).toBe(2);
      a.close();
      await connectionsEnded(emu, 2);
      const again = await runSession(wsUrl(emu, PATH, RAW), { config: 'default', audio: SHORT });
      expect(again.closeCode).toBe(1000);
      b.close();
    });
  });
});

describe('awaiting config', () => {
  it('closes 1003 after an error event when audio comes before the config frame', async () => {
    await withEmulator({}, async (emu) => {
      expectRefused(await runSession(wsUrl(emu, PATH, RAW), { audio: SHORT }), 1003, STREAMING_ERRORS.audioBeforeConfig);
    });
  });

  it('validates the config frame like the service: BatchConfig, known presets only', async () => {
    await withEmulator({}, async (emu) => {
      const bad = ['{not json', '42', JSON.stringify({ behaviours: [] }), JSON.stringify({ behaviors: ['preset:no-such-preset'] }), JSON.stringify({ stt: { custom_terms: [''] } })];
      for (const config of bad) expectRefused(await runSession(wsUrl(emu, PATH, RAW), { config }), 1003, 'Invalid configuration.');
      const good = await runSession(wsUrl(emu, PATH, RAW), { config: JSON.stringify({ behaviors: ['preset:empathy'], produce_summary: false }), audio: SHORT });
      expect(good.closeCode).toBe(1000);
    });
  });

  it('takes any 8-4-4-4-12 hex UUID in the config frame and closes 1003 only for a genuinely bad one', async () => {
    await withEmulator({}, async (emu) => {
      const config = (uuid: string): string => JSON.stringify({ conversation_types: [{ conversation_type_uuid: uuid, name: 'Support' }], produce_summary: false });
      const good = await runSession(wsUrl(emu, PATH, RAW), { config: config('aaaaaaaa-aaaa-aaaa-aaaa-aaaaaaaaaaaa'), audio: SHORT.subarray(0, 3200) });
      expect(good.closeCode).toBe(1000);
      expect(ofType(good.frames, 'error')).toHaveLength(0);
      expectRefused(await runSession(wsUrl(emu, PATH, RAW), { config: config('aaaaaaaa-aaaa-aaaa-aaaa-aaaaaaaaaaa') }), 1003, 'Invalid configuration.');
    });
  });

  it('closes 1003 for audio query parameters the service refuses, with its wording', async () => {
    await withEmulator({}, async (emu) => {
      const cases: Array<[Record<string, string | number>, RegExp]> = [
        [{ audio_format: 'mp4' }, /^Invalid audio_format='mp4'\. Valid values: \[/],
        [{ audio_format: 's16le' }, /^Raw audio formats require sample_rate and num_channels/],
        [{ sample_rate: 16000, num_channels: 1 }, /^sample_rate and num_channels require audio_format/],
        [{ ...RAW, sample_rate: 50000 }, /^Invalid sample_rate=50000\. Valid values: \[/],
        [{ ...RAW, num_channels: 12 }, /^Invalid num_channels=12\. Must be between 1 and 8/],
      ];
      for (const [q, msg] of cases) expectRefused(await runSession(wsUrl(emu, PATH, q), { config: 'default' }), 1003, msg);
    });
  });
});

describe('streaming, finishing, done', () => {
  it('answers audio with events, then done with the true duration and a normal close, no error', async () => {
    await withEmulator({}, async (emu) => {
      const r = await runSession(wsUrl(emu, PATH, RAW), { config: 'default', audio: SHORT, chunkBytes: 1000 });
      expect(r.closeCode).toBe(1000);
      expect(ofType(r.frames, 'error')).toHaveLength(0);
      expect(r.frames.at(-1)).toEqual({ type: 'done', duration_ms: 2000 });
      expect(ofType(r.frames, 'clip').length).toBeGreaterThan(0);
    });
  });

  it('takes audio frames of any size, even one byte at a time across sample boundaries', async () => {
    await withEmulator({}, async (emu) => {
      const audio = SHORT.subarray(0, 3200); // 100 ms
      const r = await runSession(wsUrl(emu, PATH, RAW), { config: 'default', audio, chunkBytes: 1 });
      expect(r.frames.at(-1)).toEqual({ type: 'done', duration_ms: 100 });
    });
  });

  it('ends with done and 1000 when no audio was sent at all', async () => {
    await withEmulator({}, async (emu) => {
      const r = await runSession(wsUrl(emu, PATH, RAW), { config: 'default' });
      expect(r.frames).toEqual([{ type: 'done', duration_ms: 0 }]);
      expect(r.closeCode).toBe(1000);
    });
  });

  it('closes 1003 on a non-empty text frame after the config frame', async () => {
    await withEmulator({}, async (emu) => {
      const r = await new Promise<SessionResult>((resolve) => {
        const frames: SessionResult['frames'] = [];
        const ws = new WebSocket(wsUrl(emu, PATH, RAW));
        ws.on('open', () => {
          ws.send('default');
          ws.send('default');
        });
        ws.on('message', (d) => frames.push(JSON.parse(String(d))));
        ws.on('close', (closeCode) => resolve({ frames, rawFrames: [], closeCode, opened: true }));
      });
      expectRefused(r, 1003, STREAMING_ERRORS.unexpectedText);
    });
  });

  it('charges the true duration to the organization on close, and releases the slot', async () => {
    await withEmulator({ organizations: [{ keys: ['k'], credits: 100, creditsPerAudioSecond: 2 }], apiKey: 'k' }, async (emu) => {
      await runSession(wsUrl(emu, PATH, RAW), { config: 'default', audio: SHORT });
      await connectionsEnded(emu, 1);
      const org = emu.accounts.organizations[0]!;
      expect(org.usedMs.conversation).toBe(2000);
      expect(org.credits).toBeCloseTo(96);
      expect(org.inFlight.conversation).toBe(0);
      expect(emu.connections[0]).toMatchObject({ path: PATH, durationMs: 2000, closeCode: 1000, bytesReceived: SHORT.length });
    });
  });
});

describe('4002: audio that is not what it claims', () => {
  it('refuses raw audio whose byte count is not a whole number of sample frames at the end', async () => {
    await withEmulator({}, async (emu) => {
      const r = await runSession(wsUrl(emu, PATH, RAW), { config: 'default', audio: SHORT.subarray(0, 3201) });
      expectRefused(r, 4002, 'Invalid input audio');
      const stereo = await runSession(wsUrl(emu, PATH, { ...RAW, num_channels: 2 }), { config: 'default', audio: SHORT.subarray(0, 3202) });
      expectRefused(stereo, 4002, 'Invalid input audio');
    });
  });

  it('refuses bytes that are no accepted container, MP4 included', async () => {
    await withEmulator({}, async (emu) => {
      const garbage = Buffer.from('this is certainly not audio, just text bytes'.repeat(20));
      expectRefused(await runSession(wsUrl(emu, PATH), { config: 'default', audio: garbage }), 4002, 'Invalid input audio');
      expectRefused(await runSession(wsUrl(emu, PATH), { config: 'default', audio: sample('call.mp4') }), 4002, 'Invalid input audio');
    });
  });

  it('refuses a container that does not match the declared audio_format', async () => {
    await withEmulator({}, async (emu) => {
      const r = await runSession(wsUrl(emu, PATH, { audio_format: 'mp3' }), { config: 'default', audio: sample('call.wav').subarray(0, 64000) });
      expectRefused(r, 4002, 'Invalid input audio');
    });
  });

  it('refuses a container that ffmpeg cannot decode (an MP3 header over garbage)', async () => {
    await withEmulator({}, async (emu) => {
      const fake = Buffer.concat([Buffer.from('ID3'), Buffer.alloc(7), Buffer.alloc(4000, 0x11)]);
      expectRefused(await runSession(wsUrl(emu, PATH), { config: 'default', audio: fake }), 4002, 'Invalid input audio');
    });
  });

  it('refuses a truncated WAV header', async () => {
    await withEmulator({}, async (emu) => {
      expectRefused(await runSession(wsUrl(emu, PATH), { config: 'default', audio: sample('call.wav').subarray(0, 20) }), 4002, 'Invalid input audio');
    });
  });
});

describe('scripted faults', () => {
  it('closes with a given code at a given point of the audio, after an error event', async () => {
    const scenario = { faults: [{ at: 'audio' as const, at_ms: 1000, action: 'close' as const, code: 1011 }] };
    await withEmulator({ scenario }, async (emu) => {
      expectRefused(await runSession(wsUrl(emu, PATH, RAW), { config: 'default', audio: SHORT, chunkBytes: 8000 }), 1011, 'Internal server error');
      expect(emu.connections.length === 0 || emu.connections[0]!.durationMs <= 2000).toBe(true);
    });
  });

  it('closes 4031 right after a given clip, with the scripted error text', async () => {
    const scenario = { faults: [{ at: 'clip' as const, clip: 1, action: 'close' as const, code: 4031, error: 'Insufficient credits.' }] };
    await withEmulator({ scenario }, async (emu) => {
      const r = await runSession(wsUrl(emu, PATH, RAW), { config: 'default', audio: wavBody(sample('call.wav')) });
      expectRefused(r, 4031, 'Insufficient credits.');
      expect(ofType(r.frames, 'clip')).toHaveLength(2);
    });
  });

  it('drops the connection without a close frame (1006)', async () => {
    await withEmulator({ scenario: { faults: [{ at: 'config', action: 'drop' }] } }, async (emu) => {
      const r = await runSession(wsUrl(emu, PATH, RAW), { config: 'default', audio: SHORT });
      expect(r.closeCode).toBe(1006);
      expect(r.frames).toEqual([]);
    });
  });

  it('stalls before done: the events come, done never does', async () => {
    await withEmulator({ scenario: { faults: [{ at: 'end', action: 'stall' }] } }, async (emu) => {
      const r = await runSession(wsUrl(emu, PATH, RAW), { config: 'default', audio: SHORT, timeoutMs: 600 });
      expect(ofType(r.frames, 'clip').length).toBeGreaterThan(0);
      expect(ofType(r.frames, 'done')).toHaveLength(0);
      expect(r.closeCode).toBe(1006);
    });
  });

  it('restart: an error event, then the going-away close 1012, mid-audio', async () => {
    await withEmulator({ scenario: { faults: [{ at: 'audio', at_ms: 500, action: 'restart' }] } }, async (emu) => {
      expectRefused(await runSession(wsUrl(emu, PATH, RAW), { config: 'default', audio: SHORT, chunkBytes: 3200 }), GOING_AWAY_CLOSE_CODE, STREAMING_ERRORS.restarting);
      expect(GOING_AWAY_CLOSE_CODE).toBe(1012);
    });
  });

  it('silence: the socket stays open (no FIN, no RST) but nothing is answered, not even a ping', async () => {
    const logged: string[] = [];
    await withEmulator({ scenario: { faults: [{ at: 'config', action: 'silence' }] }, log: (l) => logged.push(l) }, async (emu) => {
      const ws = new WebSocket(wsUrl(emu, PATH, RAW));
      ws.on('error', () => undefined);
      await new Promise((r) => ws.once('open', r));
      ws.send('default');
      let pongs = 0;
      let closed = false;
      ws.on('pong', () => pongs++);
      ws.on('close', () => (closed = true));
      // The config frame strikes the fault (the emulator says so); pings after it go unanswered.
      await expect.poll(() => logged).toContain('fault silence at config');
      for (let i = 0; i < 5; i++) {
        ws.ping();
        ws.send(SHORT.subarray(0, 3200));
        await new Promise((r) => setTimeout(r, 60));
      }
      expect(pongs).toBe(0);
      expect(closed).toBe(false);
      expect(ws.readyState).toBe(WebSocket.OPEN);
      ws.terminate();
    });
  });

  it('shutdown(): every live session gets an error event and close 1012, then the emulator stops', async () => {
    const emu = await startEmulator({});
    try {
      let opened = 0;
      const sessions = [0, 1].map(
        () =>
          new Promise<{ frames: string[]; code: number }>((resolve) => {
            const ws = new WebSocket(wsUrl(emu, PATH, RAW));
            const frames: string[] = [];
            ws.on('error', () => undefined);
            ws.on('open', () => {
              ws.send('default');
              ws.send(SHORT.subarray(0, 3200), () => opened++);
            });
            ws.on('message', (d) => frames.push(String(d)));
            ws.on('close', (code) => resolve({ frames, code }));
          }),
      );
      // Both are streaming before the shutdown: admitted (the server's counter), configured and audio sent.
      await expect.poll(() => [opened, emu.accounts.organizations[0]!.inFlight.conversation]).toEqual([2, 2]);
      await emu.shutdown({ graceMs: 1_000 });
      for (const s of await Promise.all(sessions)) {
        expect(s.code).toBe(GOING_AWAY_CLOSE_CODE);
        expect(JSON.parse(s.frames.at(-1)!)).toEqual({ type: 'error', error: STREAMING_ERRORS.restarting });
      }
      expect(emu.connections.map((c) => c.closeCode)).toEqual([GOING_AWAY_CLOSE_CODE, GOING_AWAY_CLOSE_CODE]);
    } finally {
      await emu.close();
    }
  });

  it('sends a malformed frame, then carries on to done', async () => {
    await withEmulator({ scenario: { faults: [{ at: 'config', action: 'malformed' }] } }, async (emu) => {
      const r = await runSession(wsUrl(emu, PATH, RAW), { config: 'default', audio: SHORT });
      expect(r.rawFrames).toEqual(['{"type": "clip", "clip": {"clip_uuid": 42']);
      expect(r.frames.at(-1)?.type).toBe('done');
    });
  });

  it('refuses the upgrade with an HTTP status', async () => {
    await withEmulator({ scenario: { faults: [{ at: 'handshake', action: 'http', status: 503 }] } }, async (emu) => {
      const status = await new Promise<number>((resolve) => {
        const ws = new WebSocket(wsUrl(emu, PATH));
        ws.on('unexpected-response', (_req, res) => resolve(res.statusCode ?? 0));
        ws.on('error', () => undefined);
      });
      expect(status).toBe(503);
    });
  });

  it('plays verbatim steps exactly (analysis off by default when steps are given)', async () => {
    const scenario = {
      steps: [
        { at_ms: 0, event: { type: 'summary', text: 'first' } },
        { at_ms: 1500, raw: '{"type":"topics","topics":["late"]}' },
        { after_end: true, event: { type: 'summary', text: 'last' } },
      ],
    };
    await withEmulator({ scenario }, async (emu) => {
      const r = await runSession(wsUrl(emu, PATH, RAW), { config: 'default', audio: SHORT });
      expect(r.frames).toEqual([
        { type: 'summary', text: 'first' },
        { type: 'topics', topics: ['late'] },
        { type: 'summary', text: 'last' },
        { type: 'done', duration_ms: 2000 },
      ]);
    });
  });
});
