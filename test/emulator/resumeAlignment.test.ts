// Scenarios that follow a resume (src/emulator/resumeAlignment.ts): the session's first audio
// found in the scenario's named audio by content; a session resumed mid-call on the emulator
// (real sockets) gets the clips an undisturbed one got from that point, on its own clock; a
// session that cannot be found gets speech segments only and says so.
import { readFileSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { align, loadNamedAudio } from '../../src/emulator/resumeAlignment.js';
import { loadScenarioFile } from '../../src/emulator/scenario.js';
import { mulawToFloat } from '../../src/emulator/pcm.js';
import { runCli } from '../cli/runCli.js';
import { spawnEmulator, type EmulatorProcess } from '../internal/emulatorProcess.js';
import { connectionsEnded, ofType, runSession, SAMPLES, wavBody, withEmulator, wsUrl, type Frame } from './helpers.js';

const PATH = '/api/svc-2-streaming';
const RAW = { audio_format: 's16le', sample_rate: 16000, num_channels: 1 };
const CALL = SAMPLES + 'call.wav';

describe('align', () => {
  const named = loadNamedAudio(CALL);

  it.each([0, 1234.5625, 12_000, 30_250])('the same samples %d ms in: found to the sample', (ms) => {
    const at = Math.round((ms / 1000) * 16000);
    expect(align(named, named.samples.subarray(at, at + 3 * 16000), 16000)).toEqual({ offsetMs: (at / 16000) * 1000 });
  });

  it('the call as 8 kHz mu-law (another rate, another codec): found within a frame', () => {
    const bytes = readFileSync(SAMPLES + 'call-8k.mulaw');
    const from = 8000 * 17;
    const window = Float32Array.from(bytes.subarray(from, from + 8000 * 3), mulawToFloat);
    const found = align(named, window, 8000) as { offsetMs: number };
    expect(Math.abs(found.offsetMs - 17_000)).toBeLessThanOrEqual(20);
  });

  it('audio that is not in it: not found, and why', () => {
    const noise = Float32Array.from({ length: 16000 * 2 }, (_, i) => Math.sin(i * 0.3) * (i % 3200 < 1600 ? 0.5 : 0.001));
    expect(align(named, noise, 16000)).toEqual({ reason: expect.stringMatching(/no place in it sounds like|several places/) });
  });
});

/** The conversation of the sample call, from `fromMs` on, through the emulator playing the sample's scenario. */
async function conversation(fromMs: number): Promise<{ frames: Frame[]; alignment: unknown }> {
  const scenario = await loadScenarioFile(SAMPLES + 'call.scenario.json');
  return withEmulator({ scenario }, async (emu) => {
    const pcm = wavBody(readFileSync(CALL));
    const audio = pcm.subarray(Math.round((fromMs / 1000) * 16000) * 2);
    const r = await runSession(wsUrl(emu, PATH, RAW), { config: readFileSync(SAMPLES + 'call.config.json', 'utf8'), audio, chunkBytes: 3200, timeoutMs: 20_000 });
    await connectionsEnded(emu, 1);
    return { frames: r.frames, alignment: emu.connections[0]!.alignment };
  });
}

describe('a session resumed mid-call on the emulator, the sample scenario named its audio', () => {
  it('gets the clips the undisturbed session got from that point, on its own clock; done is its own audio', async () => {
    const whole = await conversation(0);
    const clips = ofType(whole.frames, 'clip').map((f) => f['clip'] as { start_ms: number; duration_ms: number; text: string; speaker_label: string });
    expect(whole.alignment).toEqual({ audio: 'call.wav', offsetMs: 0 });
    // Resume where a client would: the end of the fourth clip (the commit point).
    const commit = clips[3]!.start_ms + clips[3]!.duration_ms;
    const resumed = await conversation(commit);
    expect(resumed.alignment).toMatchObject({ audio: 'call.wav' });
    expect(Math.abs((resumed.alignment as { offsetMs: number }).offsetMs - commit)).toBeLessThan(1);
    const after = ofType(resumed.frames, 'clip').map((f) => f['clip'] as { start_ms: number; text: string; speaker_label: string });
    expect(after.map((c) => [c.speaker_label, c.text])).toEqual(clips.slice(4).map((c) => [c.speaker_label, c.text]));
    after.forEach((c, i) => expect(Math.abs(c.start_ms + commit - clips[4 + i]!.start_ms)).toBeLessThanOrEqual(20));
    // Every time is the session's own: nothing before its start.
    for (const f of resumed.frames) {
      const p = (f['clip'] ?? f['partial_clip']) as { start_ms?: number } | undefined;
      if (p?.start_ms !== undefined) expect(p.start_ms).toBeGreaterThanOrEqual(0);
    }
    const done = ofType(resumed.frames, 'done')[0]!;
    expect(Math.abs((done['duration_ms'] as number) - (38_507 - commit))).toBeLessThanOrEqual(1);
    // The script went on: the summary at the end is the scenario's.
    expect(ofType(resumed.frames, 'summary').at(-1)).toEqual(ofType(whole.frames, 'summary').at(-1));
  }, 60_000);

  it('resumed inside an utterance (a client that kept too little to resume before it): that utterance from the session\'s start, cut there, as the service would hear it', async () => {
    const whole = await conversation(0);
    const clips = ofType(whole.frames, 'clip').map((f) => f['clip'] as { start_ms: number; duration_ms: number; text: string; speaker_label: string });
    // 1.5 s into the fifth clip.
    const cut = clips[4]!;
    const from = cut.start_ms + 1_500;
    const resumed = await conversation(from);
    expect(Math.abs((resumed.alignment as { offsetMs: number }).offsetMs - from)).toBeLessThan(1);
    const after = ofType(resumed.frames, 'clip').map((f) => f['clip'] as { start_ms: number; duration_ms: number; text: string; speaker_label: string });
    expect(after[0]).toMatchObject({ start_ms: 0, text: cut.text, speaker_label: cut.speaker_label });
    expect(Math.abs(after[0]!.duration_ms - (cut.start_ms + cut.duration_ms - from))).toBeLessThanOrEqual(20);
    // Its partials, where they have an end, are from the session's start too; the later clips are as before.
    for (const f of ofType(resumed.frames, 'partial_clip')) expect((f['partial_clip'] as { start_ms: number }).start_ms).toBeGreaterThanOrEqual(0);
    expect(after.slice(1).map((c) => [c.speaker_label, c.text])).toEqual(clips.slice(5).map((c) => [c.speaker_label, c.text]));
  }, 60_000);

  it('audio not in the named audio: speech segments only, and the summary says why', async () => {
    const scenario = await loadScenarioFile(SAMPLES + 'call.scenario.json');
    await withEmulator({ scenario }, async (emu) => {
      const tone = Buffer.alloc(16000 * 2 * 3);
      for (let i = 0; i < tone.length / 2; i++) tone.writeInt16LE(Math.round(Math.sin(i * 0.2) * (i % 8000 < 4000 ? 12000 : 30)), i * 2);
      const r = await runSession(wsUrl(emu, PATH, RAW), { config: 'default', audio: tone, chunkBytes: 3200, timeoutMs: 20_000 });
      await connectionsEnded(emu, 1);
      expect(emu.connections[0]!.alignment).toEqual({ audio: 'call.wav', reason: expect.any(String) });
      const texts = ofType(r.frames, 'clip').map((f) => (f['clip'] as { text: string }).text);
      expect(texts.length).toBeGreaterThan(0);
      expect(texts.every((t) => t === '')).toBe(true);
      expect(ofType(r.frames, 'summary')).toEqual([]);
    });
  }, 30_000);
});

describe('the sample call with --scenario sample, its emulator killed and restarted mid-call', () => {
  const started: EmulatorProcess[] = [];
  afterAll(async () => {
    await Promise.all(started.map((e) => e.stop('SIGKILL')));
  });

  it('gives the same clips as an undisturbed run', async () => {
    const argv = ['analyze', SAMPLES + 'call.wav', '--json', '--config', SAMPLES + 'call.config.json', '--speed', '4'];
    const clipsOf = (stdout: string) =>
      ((JSON.parse(stdout.trim().split('\n').at(-1)!) as { clips: Array<{ speaker_label: string; text: string; start_ms: number }> }).clips).map((c) => ({
        speaker: c.speaker_label,
        text: c.text,
        start: c.start_ms,
      }));
    const undisturbed = await runCli(argv);
    expect(undisturbed.code, undisturbed.stderr).toBe(0);

    let emu = await spawnEmulator(0, ['--scenario', 'sample']);
    started.push(emu);
    const port = emu.port;
    const disturbed = await runCli(argv, {
      env: { SVC_BASE_URL: emu.baseUrl, SVC_API_KEY: emu.apiKey },
      whileRunning: async (stdout) => {
        // Three clips in (about 10 s of the call): a crash, then the emulator again on the same port.
        while ((stdout().match(/"type":"clip"/g) ?? []).length < 3) await new Promise((r) => setTimeout(r, 20));
        await emu.stop('SIGKILL');
        emu = await spawnEmulator(port, ['--scenario', 'sample']);
        started.push(emu);
      },
    });
    expect(disturbed.code, disturbed.stderr).toBe(0);
    expect(disturbed.stderr).toMatch(/reconnecting \(attempt 1\)/);
    const expected = clipsOf(undisturbed.stdout);
    const got = clipsOf(disturbed.stdout);
    expect(got.map((c) => [c.speaker, c.text])).toEqual(expected.map((c) => [c.speaker, c.text]));
    got.forEach((c, i) => expect(Math.abs(c.start - expected[i]!.start)).toBeLessThanOrEqual(50));
  }, 120_000);
});
