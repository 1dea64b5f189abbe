// emotionFiles: batchFiles over the emotion call, one typed outcome per path against the
// emulator (the run's bounds, stops and aborts are batchFiles.test.ts's).
import { from, lastValueFrom, toArray } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { emotionFiles, isFileResult } from 'svc-stream/batch';
import { audioDirFixture, emulators } from './fixtures.js';

const files = audioDirFixture();
const emulator = emulators();

describe('emotionFiles', () => {
  it('an emotion and its windows for each path, against the emotion model', async () => {
    const emu = await emulator();
    const good = files().tone('feel.wav', 1);
    const out = await lastValueFrom(from([good]).pipe(emotionFiles({ baseUrl: emu.baseUrl, apiKey: emu.apiKey }), toArray()));
    expect(out).toHaveLength(1);
    const o = out[0]!;
    expect(isFileResult(o) && Array.isArray(o.result.time_series)).toBe(true);
    expect(emu.posts('/api/svc-2-emotion-batch')).toBe(1);
  });
});
