// emotionFiles: batchFiles over the emotion call, one typed outcome per path against the
// emulator (the run's bounds, stops and aborts are batchFiles.test.ts's).
import { from, lastValueFrom, toArray } from 'rxjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { emotionFiles, isFileResult } from 'svc-stream/batch';
import { audioDir, loggedEmulator, type AudioDir, type LoggedEmulator } from './fixtures.js';

let files: AudioDir;
let emu: LoggedEmulator;
beforeAll(async () => {
  files = audioDir();
  emu = await loggedEmulator();
}, 60_000);
afterAll(async () => {
  files?.remove();
  await emu?.close();
});

describe('emotionFiles', () => {
  it('an emotion and its windows for each path, against the emotion model', async () => {
    const good = files.tone('feel.wav', 1);
    const out = await lastValueFrom(from([good]).pipe(emotionFiles({ baseUrl: emu.baseUrl, apiKey: emu.apiKey }), toArray()));
    expect(out).toHaveLength(1);
    const o = out[0]!;
    expect(isFileResult(o) && Array.isArray(o.result.time_series)).toBe(true);
    expect(emu.posts('/api/svc-2-emotion-batch')).toBe(1);
  });
});
