// Whether a result is the service's or the emulator's: the emulator's header on the answer,
// read into the result's metadata by the HTTP client, over real sockets; the result's JSON is
// the contract's either way.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { detectEmotionAsync, emulatorNote, resultLabel, resultSource } from 'svc-stream/batch';
import { startEmulator } from 'svc-stream/emulator';
import { samplePath } from 'svc-stream';

describe('resultSource', () => {
  it('a batch result the emulator made says so; its JSON is unchanged', async () => {
    const emu = await startEmulator();
    try {
      const result = await detectEmotionAsync(samplePath('call.wav'), { baseUrl: emu.baseUrl, apiKey: emu.apiKey });
      expect(resultSource(result)).toBe('emulator');
      // What the stand-ins heard, and what they could not measure, beside the result.
      expect(emulatorNote(result)).toBe('stand-in; heard=speech%2038.5s; not-measured=emotion%3A%20speech%20reads%20Neutral%2C%20anything%20else%20Unknown');
      expect(resultLabel(result)).toEqual({ source: 'emulator', note: "stand-ins computed from the signal, not the service's models (heard: speech 38.5s; not measured: emotion: speech reads Neutral, anything else Unknown)" });
      expect(Object.keys(result).sort()).toEqual(['emotion', 'time_series']);
    } finally {
      await emu.close();
    }
  });

  it("a server that does not send the header is the service", async () => {
    const server = createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ emotion: 'Happy', time_series: [] }));
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    try {
      const { port } = server.address() as AddressInfo;
      const result = await detectEmotionAsync(samplePath('call.wav'), { baseUrl: `http://127.0.0.1:${port}`, apiKey: 'k', retry: false });
      expect(resultSource(result)).toBe('service');
      expect(emulatorNote(result)).toBeUndefined();
      expect(resultLabel(result)).toEqual({ source: 'service' });
    } finally {
      await new Promise((r) => server.close(r));
    }
  });
});
