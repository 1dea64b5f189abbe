// Record a session from the emulator, replay the recording with the emulator, get the same
// final state; no key and no URL in the file.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { lastValueFrom, reduce } from 'rxjs';
import { afterAll, expect, it } from 'vitest';
import { analyzeConversation, fileSource, recordSession, samplePath, type ServerEvent } from 'svc-stream';
import { loadScenarioFile, type RunningEmulator } from 'svc-stream/emulator';
import { initialConversationSnapshot, snapshotReducer } from '../../src/state/snapshot.js';
import { stateJson } from '../../src/state/stateJson.js';
import { CALL_SCENARIO, withEmulator } from '../emulator/helpers.js';

const dir = mkdtempSync(join(tmpdir(), 'svc-record-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function finalState(emu: RunningEmulator, record?: string): Promise<unknown> {
  const events$ = fileSource(samplePath('call.wav')).pipe(analyzeConversation({ apiKey: emu.apiKey, baseUrl: emu.baseUrl, config: JSON.parse(readFileSync(samplePath('call.config.json'), 'utf8')) }));
  return lastValueFrom(
    (record ? events$.pipe(recordSession(record, { secrets: [emu.baseUrl] })) : events$).pipe(reduce((s, e: ServerEvent) => snapshotReducer(s, e), initialConversationSnapshot)),
  ).then(stateJson);
}

it('a session recorded from the emulator and replayed by it ends in the same state', async () => {
  const file = join(dir, 'call.ndjson');
  const recorded = await withEmulator({ scenario: CALL_SCENARIO as never }, (emu) => finalState(emu, file));
  const lines = readFileSync(file, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
  expect(lines[0]).toEqual({ type: 'svc-stream-recording', version: 1 });
  expect(lines.length).toBeGreaterThan(20);
  // In step with the audio: positions never go back, the clips come at their ends.
  const positions = lines.slice(1).filter((l) => l['at_ms'] !== undefined).map((l) => l['at_ms'] as number);
  expect(positions).toEqual([...positions].sort((a, b) => a - b));
  expect(positions.at(-1)).toBeGreaterThan(30_000);
  expect(lines.slice(1).some((l) => (l['event'] as { type: string }).type === 'done')).toBe(false);

  const scenario = await loadScenarioFile(file);
  expect(scenario.analysis).toBe(false);
  const replayed = await withEmulator({ scenario }, (emu) => finalState(emu));
  expect(replayed).toEqual(recorded);
  expect((recorded as { clips: unknown[] }).clips).toHaveLength(10);
}, 60_000);

it('no key and no URL enters a recording, even when the service echoes them', async () => {
  const file = join(dir, 'echo.ndjson');
  const key = 'svc-recording-test-key-0123456789';
  const scenario = { steps: [{ at_ms: 0, event: { type: 'note', text: `key ${key} at http://127.0.0.1:9/api and wss://elsewhere.example/x` } }], analysis: true };
  await withEmulator({ apiKey: key, scenario: scenario as never }, (emu) => finalState(emu, file));
  const text = readFileSync(file, 'utf8');
  expect(text).toContain('"type":"note"');
  expect(text).not.toContain(key);
  expect(text).not.toMatch(/https?:\/\/|wss?:\/\//);
}, 60_000);
