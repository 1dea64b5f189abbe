// `svc-stream emulator` stopped by a signal: a planned stop is not a crash. Live sessions get
// an `error` event and the going-away close (1012), then the process exits 0.
import { describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { spawnEmulator } from '../internal/emulatorProcess.js';

const PATH = '/api/svc-2-streaming?audio_format=s16le&sample_rate=16000&num_channels=1';

function liveSession(baseUrl: string, apiKey: string): { opened: Promise<void>; ended: Promise<{ frames: string[]; code: number }> } {
  const ws = new WebSocket(`${baseUrl.replace(/^http/, 'ws')}${PATH}&api_key=${apiKey}`);
  const frames: string[] = [];
  ws.on('error', () => undefined);
  ws.on('message', (d) => frames.push(String(d)));
  // Opened once the server answered a ping sent after the config and the audio: it read both (in order).
  const opened = new Promise<void>((resolve) =>
    ws.once('open', () => {
      ws.send('default');
      ws.send(new Uint8Array(3200));
      ws.once('pong', () => resolve());
      ws.ping();
    }),
  );
  const ended = new Promise<{ frames: string[]; code: number }>((resolve) => ws.on('close', (code) => resolve({ frames, code })));
  return { opened, ended };
}

describe('svc-stream emulator on a signal', () => {
  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    it(`${signal}: every live session gets an error event and close 1012, then the process exits 0`, async () => {
      const emu = await spawnEmulator();
      try {
        const sessions = [liveSession(emu.baseUrl, emu.apiKey), liveSession(emu.baseUrl, emu.apiKey)];
        await Promise.all(sessions.map((s) => s.opened));
        const exit = emu.stop(signal);
        for (const s of await Promise.all(sessions.map((x) => x.ended))) {
          expect(s.code).toBe(1012);
          expect(JSON.parse(s.frames.at(-1)!)).toEqual({ type: 'error', error: 'Service restarting. Please reconnect.' });
        }
        expect(await exit).toBe(0);
      } finally {
        await emu.stop('SIGKILL');
      }
    }, 90_000);
  }
});
