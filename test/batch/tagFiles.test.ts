// tagFiles: batchFiles over the audio-event call, one typed outcome per path against the
// emulator (the run's bounds, stops and aborts are batchFiles.test.ts's).
import { from, lastValueFrom, toArray } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { isFileResult, tagFiles } from 'svc-stream/batch';
import { audioDirFixture, emulators } from './fixtures.js';

const files = audioDirFixture();
const emulator = emulators();

describe('tagFiles', () => {
  it('audio events for each path, and a typed failure for a file that is not audio', async () => {
    const emu = await emulator();
    const good = files().tone('tag.wav', 1);
    const bad = files().bytes('bad.wav', 'not audio');
    const out = await lastValueFrom(from([good, bad]).pipe(tagFiles({ baseUrl: emu.baseUrl, apiKey: emu.apiKey }), toArray()));
    const byPath = new Map(out.map((o) => [o.path, o]));
    const ok = byPath.get(good)!;
    expect(isFileResult(ok) && typeof ok.result.probs === 'object').toBe(true);
    expect(byPath.get(bad)).toMatchObject({ error: { code: 'corrupt_audio' }, skipped: false });
    expect(emu.posts('/api/svc-2-audio-event-classifier')).toBe(2);
  });
});
