// samples/tag-folder.ts runs as documented: one line per audio file with emotion and events.
import { describe, expect, it } from 'vitest';
import { runSample } from './runSample.js';

describe('samples/tag-folder.ts', () => {
  it('tags every audio file of samples/ (the mu-law file is not a batch format)', async () => {
    const run = runSample('tag-folder');
    expect(await run.exited, run.stderr()).toBe(0);
    const lines = run.stdout().trim().split('\n');
    expect(lines[0]).toMatch(/^4 audio files in .*samples$/);
    expect(lines.slice(1).map((l) => l.split(/\s+/)[0])).toEqual(['call.mp3', 'call.mp4', 'call.wav', 'music-applause.wav']);
    expect(lines.find((l) => l.startsWith('music-applause.wav'))).toMatch(/emotion: \w+ .*events: Applause \d\.\d\d/);
    expect(lines.find((l) => l.startsWith('call.wav'))).toMatch(/emotion: \w+ \(\d+ windows\)/);
    expect(run.stdout()).not.toContain('failed');
  }, 25_000);
});
