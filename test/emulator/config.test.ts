// The emulator config file: organizations and limits, scenario files relative to the
// config, and scenarios chosen per key or per path.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { loadEmulatorConfig, startEmulator, type RunningEmulator } from 'svc-stream/emulator';
import { ofType, runSession, sample, SAMPLES, wavBody, wsUrl } from './helpers.js';

const RAW16 = { audio_format: 's16le', sample_rate: 16000, num_channels: 1 };
let emu: RunningEmulator | undefined;
const dirs: string[] = [];

afterEach(async () => {
  await emu?.close();
  emu = undefined;
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function writeConfig(value: unknown): string {
  const dir = mkdtempSync(join(tmpdir(), 'svc-emu-'));
  dirs.push(dir);
  writeFileSync(join(dir, 'short.json'), JSON.stringify({ timeline: [{ at_ms: 0, event: { type: 'summary', text: 'short scenario' } }] }));
  const path = join(dir, 'emulator.json');
  writeFileSync(path, JSON.stringify(value));
  return path;
}

describe('loadEmulatorConfig', () => {
  it('builds organizations with their limits and prints the first key', async () => {
    const path = writeConfig({
      organizations: [
        { id: 'acme', keys: ['acme-1', 'acme-2'], models: ['conversation', 'stt'], concurrency: { conversation: 5 }, monthlyUsageQuotaMs: { stt: 60000 }, monthlyCreditLimit: 100, credits: 50 },
        { id: 'other', keys: ['other-1'] },
      ],
      platform: { accountUuid: '00000000-0000-4000-8000-00000000abcd', apiKey: 'plat' },
    });
    emu = await startEmulator(await loadEmulatorConfig(path));
    expect(emu.apiKey).toBe('acme-1');
    expect(emu.accountUuid).toBe('00000000-0000-4000-8000-00000000abcd');
    const acme = emu.accounts.find('acme-2')!;
    expect(acme.id).toBe('acme');
    expect(acme.concurrency.conversation).toBe(5);
    expect(acme.monthlyUsageQuotaMs.stt).toBe(60000);
    expect([acme.monthlyCreditLimit, acme.credits]).toEqual([100, 50]);
    expect(acme.models.has('emotion')).toBe(false);
  });

  it('loads scenario files relative to the config and picks them per key and per path', async () => {
    const path = writeConfig({
      organizations: [{ keys: ['a'] }, { keys: ['b'] }],
      scenario: join(SAMPLES, 'call.scenario.json'),
      scenarios: { short: 'short.json' },
      scenarioByKey: { b: 'short' },
      scenarioByPath: { '/api/svc-2-stt-streaming': 'short' },
    });
    emu = await startEmulator(await loadEmulatorConfig(path));
    const audio = wavBody(sample('call.wav')).subarray(0, 32000 * 4);
    const a = await runSession(wsUrl(emu, '/api/svc-2-streaming', RAW16, 'a'), { config: 'default', audio });
    const b = await runSession(wsUrl(emu, '/api/svc-2-streaming', RAW16, 'b'), { config: 'default', audio });
    expect((ofType(a.frames, 'clip')[0]!['clip'] as any).text).toBe('Northwind Bank support, this is Sam. How can I help?');
    expect(ofType(b.frames, 'summary')).toEqual([{ type: 'summary', text: 'short scenario' }]);
    expect((ofType(b.frames, 'clip')[0]!['clip'] as any).text).toBe('');
  });

  it('names the offending path of an invalid config', async () => {
    const path = writeConfig({ organizations: [{ keys: [] }] });
    await expect(loadEmulatorConfig(path)).rejects.toThrow(/organizations\.0\.keys/);
    const bad = writeConfig({ scenarios: {}, scenarioByKey: { k: 'missing' } });
    await expect(loadEmulatorConfig(bad)).rejects.toThrow(/missing/);
  });
});
